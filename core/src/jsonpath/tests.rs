//! The cases of client-go's parser and jsonpath tests, over JSON data (Go structs have
//! no JSON equivalent; maps print in key order here, where Go's order is random).

use super::parser::{parse, Node, Param};
use super::*;
use serde_json::json;

fn field(name: &str) -> Node {
    Node::Field(name.to_owned())
}

fn text(t: &str) -> Node {
    Node::Text(t.to_owned())
}

fn param(value: i64, known: bool, derived: bool) -> Param {
    Param { value, known, derived }
}

const UNKNOWN: Param = Param { value: 0, known: false, derived: false };

fn filter(left: Vec<Node>, operator: &str, right: Vec<Node>) -> Node {
    Node::Filter { left, right, operator: operator.to_owned() }
}

#[test]
fn templates_parse_into_upstreams_nodes() {
    let os_image = || vec![field("status"), field("nodeInfo"), field("osImage")];
    let cases: Vec<(&str, Vec<Node>)> = vec![
        ("hello jsonpath", vec![text("hello jsonpath")]),
        ("hello {.jsonpath}", vec![text("hello "), Node::List(vec![field("jsonpath")])]),
        ("hello {['jsonpath']}", vec![text("hello "), Node::List(vec![field("jsonpath")])]),
        (r#"{"{"}"#, vec![Node::List(vec![text("{")])]),
        ("{[1:3]}", vec![Node::List(vec![Node::Array([param(1, true, false), param(3, true, false), UNKNOWN])])]),
        ("{.book[*].author}", vec![Node::List(vec![field("book"), Node::Array([UNKNOWN; 3]), field("author")])]),
        ("{.bicycle.*}", vec![Node::List(vec![field("bicycle"), Node::Wildcard])]),
        ("{[?(@.price<3)]}", vec![Node::List(vec![filter(vec![field("price")], "<", vec![Node::Int(3)])])]),
        ("{..}", vec![Node::List(vec![Node::Recursive])]),
        ("{..price}", vec![Node::List(vec![Node::Recursive, field("price")])]),
        ("{...price}", vec![Node::List(vec![Node::Recursive, field("price")])]),
        ("{['book.price']}", vec![Node::List(vec![field("book"), field("price")])]),
        (
            "{['bicycle.price', 3, 'book.price']}",
            vec![Node::List(vec![Node::Union(vec![
                vec![field("bicycle"), field("price")],
                vec![Node::Array([param(3, true, false), param(4, true, true), UNKNOWN])],
                vec![field("book"), field("price")],
            ])])],
        ),
        (
            "{range .items}{.name},{end}",
            vec![
                Node::List(vec![Node::Identifier("range".into()), field("items")]),
                Node::List(vec![field("name")]),
                text(","),
                Node::List(vec![Node::Identifier("end".into())]),
            ],
        ),
        (r#"{[?(@.status.nodeInfo.osImage == "()")]}"#, vec![Node::List(vec![filter(os_image(), "==", vec![text("()")])])]),
        (
            r#"{[?(@.status.nodeInfo.osImage == "(\"\")")]}"#,
            vec![Node::List(vec![filter(os_image(), "==", vec![text(r#"("")"#)])])],
        ),
        (r#"{[?(@.test == "())(")]}"#, vec![Node::List(vec![filter(vec![field("test")], "==", vec![text("())(")])])]),
        ("{[?(@.status.nodeInfo.osImage == 'Linux')]}", vec![Node::List(vec![filter(os_image(), "==", vec![text("Linux")])])]),
        (r#"{[?(@.status.nodeInfo.osImage == "{[()]}")]}"#, vec![Node::List(vec![filter(os_image(), "==", vec![text("{[()]}")])])]),
        (r#"{[?(@.status.nodeInfo.osImage == "''")]}"#, vec![Node::List(vec![filter(os_image(), "==", vec![text("''")])])]),
        (r#"{[?(@.status.nodeInfo.osImage == '""')]}"#, vec![Node::List(vec![filter(os_image(), "==", vec![text(r#""""#)])])]),
        (r"{[?(@.status.nodeInfo.osImage == '\\\'')]}", vec![Node::List(vec![filter(os_image(), "==", vec![text(r"\'")])])]),
        ("{[?(@.z)]}", vec![Node::List(vec![filter(vec![field("z")], "exists", vec![])])]),
        // With nothing after the operator, the right side takes its last character.
        ("{[?(@.a=<1)]}", vec![Node::List(vec![filter(vec![field("a")], "=<", vec![Node::Int(1)])])]),
        ("{[-5:]}", vec![Node::List(vec![Node::Array([param(-5, true, false), UNKNOWN, UNKNOWN])])]),
        ("{[-1]}", vec![Node::List(vec![Node::Array([param(-1, true, false), param(0, true, true), UNKNOWN])])]),
        ("{[1:-1]}", vec![Node::List(vec![Node::Array([param(1, true, false), param(-1, true, false), UNKNOWN])])]),
        ("{[]}", vec![Node::List(vec![Node::Array([UNKNOWN, param(1, true, true), UNKNOWN])])]),
        ("{[::2]}", vec![Node::List(vec![Node::Array([UNKNOWN, UNKNOWN, param(2, true, false)])])]),
        (r"{.a\.b.c}", vec![Node::List(vec![field("a.b"), field("c")])]),
        ("{1.5 -2 true x}", vec![Node::List(vec![Node::Float(1.5), Node::Int(-2), Node::Bool(true), Node::Identifier("x".into())])]),
        ("a}b", vec![text("a}b")]),
        (r#"{"a\tb\u00e9\x41"}"#, vec![Node::List(vec![text("a\tbéA")])]),
    ];
    for (template, want) in cases {
        assert_eq!(parse(template), Ok(want), "{template}");
    }
}

#[test]
fn parse_errors_have_upstreams_words() {
    for (template, want) in [
        ("{.hello", "unclosed action"),
        ("{.a\n}", "unclosed action"),
        ("{*}", "unrecognized character in action: U+002A '*'"),
        (r"{\\\}", r"unrecognized character in action: U+005C '\'"),
        ("{\t}", "unrecognized character in action: U+0009"),
        // The right side of `==` with nothing after it is its last `=`.
        ("{[?(@.a==)]}", "unrecognized character in action: U+003D '='"),
        ("{+12.3.0}", "cannot parse number +12.3.0"),
        ("{-}", "cannot parse number -"),
        ("{[1}", "unterminated array"),
        ("{[?(.price]}", "unterminated filter"),
        ("{[?(@.a)x}", "unclosed array expect ]"),
        ("{........}", "invalid multiple recursive descent"),
        ("{............................................................Price}", "invalid multiple recursive descent"),
        ("{[a]}", "invalid array index a"),
        ("{[\"a\"]}", "invalid array index \"a\""),
        ("{[1:2:3:4]}", "invalid array index 1:2:3:4"),
        ("{[-]}", "array index - is not a number"),
        ("{[99999999999999999999]}", "array index 99999999999999999999 is not a number"),
        ("{[0,a]}", "invalid array index a"),
        ("{\"abc}", "unterminated quoted string"),
        (r#"{"\q"}"#, r#"unquote string "\q" error invalid syntax"#),
        (r#"{'\"'}"#, r#"unquote string '\"' error invalid syntax"#),
    ] {
        assert_eq!(JsonPath::parse(template).map(|_| ()), Err(ParseError(want.to_owned())), "{template}");
    }
}

/// The template printed over `data`, or the parse or evaluation error.
fn run(template: &str, data: &Value, allow_missing_keys: bool) -> Result<String, String> {
    let path = JsonPath::parse(template).map_err(|e| e.to_string())?;
    path.execute(data, allow_missing_keys).map_err(|e| e.to_string())
}

fn check(data: &Value, allow_missing_keys: bool, cases: &[(&str, &str)]) {
    for (template, want) in cases {
        assert_eq!(run(template, data, allow_missing_keys).as_deref(), Ok(*want), "{template}");
    }
}

#[test]
fn slices_of_each_type() {
    let types = json!({
        "bools": [true, false, true, false],
        "integers": [1, 2, 3, 4],
        "floats": [1.0, 2.2, 3.3, 4.0],
        "strings": ["one", "two", "three", "four"],
        "interfaces": [true, "one", 1, 1.1],
        "maps": [{"name": "one", "value": 1}, {"name": "two", "value": 2.02},
                 {"name": "three", "value": 3.03}, {"name": "four", "value": 4.04}],
    });
    check(
        &types,
        false,
        &[
            ("{ .bools }", "[true,false,true,false]"),
            ("{ .bools[0] }", "true"),
            ("{ .bools[-1] }", "false"),
            ("{ .bools[0:2] }", "true false"),
            ("{ .bools[:2] }", "true false"),
            ("{ .bools[:4:2] }", "true true"),
            ("{ .integers }", "[1,2,3,4]"),
            ("{ .integers[-2] }", "3"),
            ("{ .integers[:4:2] }", "1 3"),
            ("{ .floats }", "[1,2.2,3.3,4]"),
            ("{ .floats[0] }", "1"),
            ("{ .floats[-2] }", "3.3"),
            ("{ .floats[:4:2] }", "1 3.3"),
            ("{ .strings }", r#"["one","two","three","four"]"#),
            ("{ .strings[0] }", "one"),
            ("{ .strings[:4:2] }", "one three"),
            ("{ .interfaces }", r#"[true,"one",1,1.1]"#),
            ("{ .interfaces[0:2] }", "true one"),
            ("{ .interfaces[:4:2] }", "true 1"),
            (
                "{ .maps }",
                r#"[{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},{"name":"four","value":4.04}]"#,
            ),
            ("{ .maps[-2] }", r#"{"name":"three","value":3.03}"#),
            ("{ .maps[::2] }", r#"{"name":"one","value":1} {"name":"three","value":3.03}"#),
            ("{ .maps[1::2] }", r#"{"name":"two","value":2.02} {"name":"four","value":4.04}"#),
        ],
    );
}

fn store() -> Value {
    json!({
        "Name": "jsonpath",
        "Book": [
            {"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
            {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
            {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
        ],
        "Bicycle": [{"Color": "red", "Price": 19.95, "IsNew": true}, {"Color": "green", "Price": 20.01, "IsNew": false}],
        "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
        "Employees": {"jason": "manager", "dan": "clerk"},
    })
}

#[test]
fn fields_brackets_filters_and_ranges_over_a_store() {
    check(&json!(null), false, &[("hello jsonpath", "hello jsonpath"), (r#"{"{"}"#, "{")]);
    check(&json!([1, 2, 3]), false, &[("{..}", "[1,2,3]")]);
    check(&json!([2, 6, 3, 7]), false, &[("{[?(@<5)]}", "2 3"), ("{[?(@>=6)]}", "6 7"), ("{[?(@!=6)]}", "2 3 7")]);
    check(&json!([0, 1, 2, 3, 4]), false, &[("{[1,3,4]}", "1 3 4")]);
    check(&json!(["Monday", "Tudesday"]), false, &[("{[0:2]}", "Monday Tudesday")]);
    check(
        &store(),
        false,
        &[
            ("hello {.Name}", "hello jsonpath"),
            ("{$.Labels.web/html}", "15"),
            ("{$.Employees.jason}", "manager"),
            ("{.Labels.k8s-app}", "20"),
            ("{.Bicycle[*].Color}", "red green"),
            ("{.Book[*].Author}", "Nigel Rees Evelyn Waugh Herman Melville"),
            (r#"{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}"#, "{red true 19.95} {green false 20.01} "),
            ("{..Price}", "19.95 20.01 8.95 12.99 8.99"),
            ("{...Price}", "19.95 20.01 8.95 12.99 8.99"),
            ("{.Bicycle}", r#"[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]"#),
            ("{.Book[-1:]}", r#"{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}"#),
            ("{..Book[2]}", r#"{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}"#),
            ("{.Bicycle[?(@.IsNew==true)]}", r#"{"Color":"red","IsNew":true,"Price":19.95}"#),
            ("{.Bicycle[?(@.Price>20.0)].Color}", "green"),
            ("{.Book[?(@.Category=='fiction')].Title}", "Sword of Honour Moby Dick"),
            ("{.Name.*}", "106 115 111 110 112 97 116 104"),
        ],
    );
    check(&store(), true, &[("{.hello}", ""), ("before-{.hello}after", "before-after")]);
}

#[test]
fn evaluation_errors_have_upstreams_words() {
    for (template, want) in [
        ("{hello}", "unrecognized identifier hello"),
        ("{.hello}", "hello is not found"),
        ("{.Labels[0]}", "map[string]interface {} is not array or slice"),
        ("{.Name[0]}", "string is not array or slice"),
        ("{.Book[?(@.Price<>10)]}", "unrecognized filter operator <>"),
        ("{range .Labels.*}{@}{end}{end}", "not in range, nothing to end"),
        ("{end}", "not in range, nothing to end"),
        ("{.Labels[?(@.a)]}", "map[engieer:10 k8s-app:20 web/html:15] is not array or slice and cannot be filtered"),
        ("{.Book[?(@.Price==\"x\")]}", "incompatible types for comparison"),
        ("{.Book[?(@.Price==1)]}", "incompatible types for comparison"),
        ("{.Bicycle[?(@.IsNew<true)]}", "invalid type for comparison"),
        ("{.Bicycle[?(@==1)]}", "invalid type for comparison"),
        ("{.Bicycle[?(@.*==1)]}", "can only compare one element at a time"),
        ("{.Book[5]}", "array index out of bounds: index 5, length 3"),
        ("{.Book[1:9]}", "array index out of bounds: index 8, length 3"),
        ("{.Book[2:1]}", "starting index 2 is greater than ending index 1"),
        ("{.Book[0:3:0]}", "step must be > 0"),
    ] {
        assert_eq!(run(template, &store(), false), Err(want.to_owned()), "{template}");
    }
}

#[test]
fn json_input_with_nulls_and_missing_keys() {
    let points = json!([
        {"id": "i1", "x": 4, "y": -5},
        {"id": "i2", "x": -2, "y": -5, "z": 1},
        {"id": "i3", "x": 8, "y": 3},
        {"id": "i4", "x": -6, "y": -1},
        {"id": "i5", "x": 0, "y": 2, "z": 1},
        {"id": "i6", "x": 1, "y": 4},
        {"id": "i7", "x": null, "y": 4},
    ]);
    check(
        &points,
        false,
        &[
            ("{[?(@.z)].id}", "i2 i5"),
            ("{[0]['id']}", "i1"),
            ("{[-1]['x']}", "null"),
            // An erring step of an existence test keeps what it was given (not a field's).
            ("{[?(@.y[0])].id}", "i1 i2 i3 i4 i5 i6 i7"),
        ],
    );
    // A null compares with nothing; integers compare with integers only.
    assert_eq!(run("{[?(@.x>0)].id}", &points, true), Err("invalid type for comparison".to_owned()));
    let numbers = json!([points[0], points[1], points[2], points[5]]);
    assert_eq!(run("{[?(@.x>0)].id}", &numbers, true).as_deref(), Ok("i1 i3 i6"));
    assert_eq!(run("{[?(@.x>0.5)].id}", &numbers, true), Err("incompatible types for comparison".to_owned()));
}

fn nodes() -> Value {
    json!({
        "kind": "List",
        "items": [
            {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
             "status": {"capacity": {"cpu": "4"}, "ready": true,
                        "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
            {"kind": "None", "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
             "status": {"capacity": {"cpu": "8"}, "ready": false,
                        "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.2"},
                                      {"type": "another", "address": "127.0.0.3"}]}},
        ],
        "users": [{"name": "myself", "user": {}}, {"name": "e2e", "user": {"username": "admin", "password": "secret"}}],
    })
}

#[test]
fn kubernetes_lists() {
    check(
        &nodes(),
        false,
        &[
            ("{range .items[*]}{.metadata.name}, {end}{.kind}", "127.0.0.1, 127.0.0.2, List"),
            (r#"{range .items[*]}{.metadata.name}{"\t"}{end}"#, "127.0.0.1\t127.0.0.2\t"),
            ("{.items[*].status.addresses[*].address}", "127.0.0.1 127.0.0.2 127.0.0.3"),
            (
                "{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}",
                "127.0.0.1, 127.0.0.2, 127.0.0.3, ",
            ),
            ("{.items[*].metadata.name}", "127.0.0.1 127.0.0.2"),
            ("{.items[*]['metadata.name', 'status.capacity']}", r#"127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}"#),
            ("{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}", r#"[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] "#),
            (r#"{.users[?(@.name=="e2e")].user.password}"#, "secret"),
            (r"{.items[0].metadata.labels.kubernetes\.io/hostname}", "127.0.0.1"),
            (r#"{.items[?(@.metadata.labels.kubernetes\.io/hostname=="127.0.0.1")].kind}"#, "None"),
            ("{.items[?(@..ready==true)].metadata.name}", "127.0.0.1"),
        ],
    );
    let names = run("{..name}", &nodes(), false).unwrap();
    let mut names: Vec<&str> = names.split(' ').collect();
    names.sort_unstable();
    assert_eq!(names, ["127.0.0.1", "127.0.0.2", "e2e", "myself"]);
}

#[test]
fn ranges_empty_nested_and_unended() {
    let empty = json!({"items": []});
    check(
        &empty,
        true,
        &[
            ("{range .items[*]}{.metadata.name}{end}", ""),
            (r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#, ""),
        ],
    );
    let pods = json!({"items": [
        {"metadata": {"name": "pod1"}, "spec": {"containers": [
            {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
            {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
        {"metadata": {"name": "pod2"}, "spec": {"containers": [
            {"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
    ]});
    check(
        &pods,
        false,
        &[
            (
                r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#,
                "pod1:foo,bar,+pod2:baz,+",
            ),
            (
                r##"{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}"##,
                "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#",
            ),
            (
                r#"{range .items[*]}{.metadata.name}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\n"}{end}"#,
                "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n",
            ),
        ],
    );
    // Without an `{end}`, the nodes after the range run once more over the whole.
    check(&json!({"items": [{"n": 1}, {"n": 2}], "n": 0}), false, &[("{range .items[*]}{.n}", "120")]);
}

#[test]
fn filters_tolerate_missing_keys_only_when_asked() {
    let pods = json!({"kind": "List", "items": [
        {"kind": "Pod", "metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
        {"kind": "Pod", "metadata": {"name": "pod2"}},
        {"kind": "Pod", "metadata": {"name": "pod3", "annotations": {"color": "green"}}},
        {"kind": "Pod", "metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
        {"resourceVersion": ""},
    ]});
    let template = r#"{.items[?(@.metadata.annotations.color=="blue")].metadata.name}"#;
    assert_eq!(run(template, &pods, true).as_deref(), Ok("pod1 pod4"));
    assert_eq!(run(template, &pods, false), Err("annotations is not found".to_owned()));
    let running = json!({"items": [
        {"metadata": {"name": "pod1"}, "status": {"phase": "Running"}},
        {"metadata": {"name": "pod2"}, "status": {"phase": "Running"}},
        {"resourceVersion": ""},
    ]});
    assert_eq!(
        run(r#"{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\n"}{end}"#, &running, true).as_deref(),
        Ok("pod1 is Running\npod2 is Running\n")
    );
}

#[test]
fn negative_indexes_and_steps() {
    let names = |n: usize| json!({"spec": {"containers": (0..n).map(|i| json!({"name": format!("fake{i}")})).collect::<Vec<_>>()}});
    check(
        &names(4),
        false,
        &[
            ("{.spec.containers[0].name}", "fake0"),
            ("{.spec.containers[0:0].name}", ""),
            ("{.spec.containers[0:-1].name}", "fake0 fake1 fake2"),
            ("{.spec.containers[-1].name}", "fake3"),
            ("{.spec.containers[-1:].name}", "fake3"),
            ("{.spec.containers[-2:].name}", "fake2 fake3"),
            ("{.spec.containers[-4].name}", "fake0"),
            ("{.spec.containers[-4:].name}", "fake0 fake1 fake2 fake3"),
            ("{.spec.containers[5:5].name}", ""),
            ("{.spec.containers[-5:-5].name}", ""),
        ],
    );
    for template in ["[-1:0]", "[-5]", "[3:1]", "[-1:-2]"] {
        assert!(run(&format!("{{.spec.containers{template}.name}}"), &names(4), false).is_err(), "{template}");
    }
    check(
        &names(6),
        false,
        &[
            ("{.spec.containers[0:].name}", "fake0 fake1 fake2 fake3 fake4 fake5"),
            ("{.spec.containers[0:6:].name}", "fake0 fake1 fake2 fake3 fake4 fake5"),
            ("{.spec.containers[1:4:2].name}", "fake1 fake3"),
            ("{.spec.containers[1:4:4].name}", "fake1"),
            ("{.spec.containers[0:6:5].name}", "fake0 fake5"),
        ],
    );
    assert!(run("{.spec.containers[0:6:-1].name}", &names(6), false).is_err());
    assert_eq!(run("{.spec.containers[0]}", &names(0), true), Err("array index out of bounds: index 0, length 0".to_owned()));
}

#[test]
fn first_results_as_printer_columns_read_them() {
    let obj = json!({"spec": {"tags": ["blue", "green"], "n": null}, "metadata": {"name": "w"}});
    let first = |path: &str| JsonPath::of_path(path).unwrap().first(&obj).map(|i| i.text());
    assert_eq!(first(".spec.tags[0]"), Some("blue".to_owned()));
    assert_eq!(first(".spec.tags[*]"), Some("blue".to_owned()));
    assert_eq!(first(".spec.tags"), Some(r#"["blue","green"]"#.to_owned()));
    assert_eq!(first(".spec.n"), Some("null".to_owned()));
    assert_eq!(first(".spec.missing"), None);
    assert_eq!(first(".spec.tags[5]"), None, "an error shows nothing");
    assert_eq!(first(".metadata.name}{.spec.tags[1]"), Some("w".to_owned()), "the first part only");
    let map = obj.as_object().unwrap();
    assert_eq!(JsonPath::of_path(".spec.tags[1]").unwrap().first_in(map).map(|i| i.text()), Some("green".to_owned()));
    assert_eq!(JsonPath::of_path("..").unwrap().first_in(map).map(|i| i.text()), Some(crate::gofmt::json(&obj)));
}

#[test]
fn crd_paths_are_checked_as_upstream_checks_them() {
    assert_eq!(simple_path_problem(""), Some("must not be empty"));
    assert_eq!(simple_path_problem("spec.size"), Some("must be a simple json path starting with ."));
    assert_eq!(simple_path_problem(".spec.size"), None);
    assert_eq!(simple_path_problem(".spec[?(@.a"), None, "upstream parses nothing here");
}

#[test]
fn evaluation_is_bounded() {
    // Ranges over everything below everything multiply: the budget stops them.
    let deep = (0..100).fold(json!(1), |inner, _| json!([inner]));
    let template = "{range ..}{range ..}{range ..}{range ..}{@}{end}{end}{end}{end}";
    assert_eq!(run(template, &deep, true), Err("jsonpath evaluation too large".to_owned()));
    assert!(run("{range ..}{range ..}{@}{end}{end}", &deep, true).is_ok());
    let ranges = "{range @}".repeat(40);
    assert_eq!(run(&ranges, &json!(1), true), Err("jsonpath ranges nested too deeply".to_owned()));
}
