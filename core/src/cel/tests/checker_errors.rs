//! Compile errors, rendered as cel-go renders them (the text upstream puts after
//! `compilation failed: `).

use super::eval;

fn compile_error(expr: &str) -> String {
    let got = eval(expr);
    got.strip_prefix("compile: ").map(str::to_owned).unwrap_or_else(|| panic!("{expr} compiled: {got}"))
}

#[test]
fn undeclared_references() {
    assert_eq!(
        compile_error("1 + 2 + foo"),
        "ERROR: <input>:1:9: undeclared reference to 'foo' (in container '')\n | 1 + 2 + foo\n | ........^"
    );
    assert_eq!(
        compile_error("self.tags.exists(y, y == 'a') && y == 'b'"),
        "ERROR: <input>:1:34: undeclared reference to 'y' (in container '')\n | self.tags.exists(y, y == 'a') && y == 'b'\n | .................................^"
    );
    assert_eq!(
        compile_error("nope(1)"),
        "ERROR: <input>:1:5: undeclared reference to 'nope' (in container '')\n | nope(1)\n | ....^"
    );
}

#[test]
fn fields_of_the_schema() {
    assert_eq!(
        compile_error("self.foo == 1"),
        "ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^"
    );
    assert_eq!(
        compile_error("self.name.foo"),
        "ERROR: <input>:1:10: type 'string' does not support field selection\n | self.name.foo\n | .........^"
    );
    // Several errors, in order of position.
    assert_eq!(
        compile_error("self.x == 1 && self.y == 2"),
        "ERROR: <input>:1:5: undefined field 'x'\n | self.x == 1 && self.y == 2\n | ....^\nERROR: <input>:1:20: undefined field 'y'\n | self.x == 1 && self.y == 2\n | ...................^"
    );
}

#[test]
fn overloads() {
    assert_eq!(
        compile_error("self.replicas == 'three'"),
        "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, string)'\n | self.replicas == 'three'\n | ..............^"
    );
    assert_eq!(
        compile_error("self.name.startsWith(1)"),
        "ERROR: <input>:1:21: found no matching overload for 'startsWith' applied to 'string.(int)'\n | self.name.startsWith(1)\n | ....................^"
    );
    assert_eq!(
        compile_error("size(1)"),
        "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n | size(1)\n | ....^"
    );
    assert_eq!(
        compile_error("self.replicas != null"),
        "ERROR: <input>:1:15: found no matching overload for '_!=_' applied to '(int, null)'\n | self.replicas != null\n | ..............^"
    );
    assert_eq!(
        compile_error("self.enabled.all(x, x)"),
        "ERROR: <input>:1:5: expression of type 'bool' cannot be range of a comprehension (must be list, map, or dynamic)\n | self.enabled.all(x, x)\n | ....^"
    );
    assert_eq!(
        compile_error("1 && true"),
        "ERROR: <input>:1:1: expected type 'bool' but found 'int'\n | 1 && true\n | ^"
    );
}

#[test]
fn literal_validators() {
    assert_eq!(
        compile_error("[1, 'a'].size() == 2"),
        "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'].size() == 2\n | ....^"
    );
    assert_eq!(
        compile_error("duration('1x') > duration('1s')"),
        "ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('1s')\n | .........^"
    );
    assert_eq!(
        compile_error("'a'.matches('[')"),
        "ERROR: <input>:1:13: invalid matches argument\n | 'a'.matches('[')\n | ............^"
    );
}

#[test]
fn syntax() {
    assert_eq!(
        compile_error("self.name =="),
        "ERROR: <input>:1:13: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.name ==\n | ............^"
    );
    // ANTLR skips the character and goes on: both errors are reported.
    assert_eq!(
        compile_error("a # b"),
        "ERROR: <input>:1:3: Syntax error: token recognition error at: '#'\n | a # b\n | ..^\nERROR: <input>:1:5: Syntax error: extraneous input 'b' expecting <EOF>\n | a # b\n | ....^"
    );
    assert_eq!(compile_error("self.`foo`"), "ERROR: <input>:1:6: unsupported syntax: '`'\n | self.`foo`\n | .....^");
}

#[test]
fn deep_expressions_are_refused_not_overflowing() {
    // Whatever the build, nesting past the limit is an error, never a crash.
    let run = |expr: String| {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || eval(&expr))
            .unwrap()
            .join()
            .unwrap()
    };
    for deep in [
        format!("{}1{} == 1", "(".repeat(300), ")".repeat(300)),
        format!("{}true{}", "!(".repeat(300), ")".repeat(300)),
        format!("{}1{} == [1]", "[".repeat(300), "]".repeat(300)),
        format!("{}1{} == 1", "size([".repeat(300), "])".repeat(300)),
        format!("self{} == 1", ".a".repeat(300)),
    ] {
        let got = run(deep);
        assert!(got.contains("recursion limit exceeded") || got.contains("max recursion depth"), "{got}");
    }
    // A modest depth compiles and runs.
    assert_eq!(run(format!("{}1{} == 1", "(".repeat(40), ")".repeat(40))), "true");
    assert_eq!(run(format!("{}true{}", "!(!(".repeat(10), "))".repeat(10))), "true");
}
