//! Expressions and what they evaluate to, taken from the cases cel-go's and
//! Kubernetes' library tests exercise (written in our own words).

use super::eval;

fn check(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (expr, want) in cases {
        let got = eval(expr);
        if got != *want {
            failures.push(format!("{expr}\n   want: {want}\n    got: {got}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn literals_and_arithmetic() {
    check(&[
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("7 / 2", "3"),
        ("-7 / 2", "-3"),
        ("7 % 3", "1"),
        ("-7 % 3", "-1"),
        ("7u / 2u", "3"),
        ("1.5 + 2.0", "3.5"),
        ("2.0 / 0.0", "+Inf"),
        ("1 / 0", "error: division by zero"),
        ("1 % 0", "error: modulus by zero"),
        ("9223372036854775807 + 1", "error: integer overflow"),
        ("-9223372036854775808 - 1", "error: integer overflow"),
        ("-(-9223372036854775808)", "error: integer overflow"),
        ("0u - 1u", "error: unsigned integer overflow"),
        ("0x10 + 1", "17"),
        ("'a' + 'b'", "ab"),
        ("b'ab' + b'c' == b'abc'", "true"),
        ("[1, 2] + [3]", "[1, 2, 3]"),
        ("size('héllo')", "5"),
        ("'héllo'.size()", "5"),
        ("size(b'\\xff\\x00')", "2"),
        ("'''multi\nline'''.size()", "10"),
        ("r'\\d+'", "\\d+"),
        ("'\\u00e9' == 'é'", "true"),
        ("!true", "false"),
        ("!!true", "true"),
    ]);
}

#[test]
fn comparisons_and_heterogeneous_equality() {
    check(&[
        ("1 < 2", "true"),
        ("1 < 1.5", "true"),
        ("2u > 1", "true"),
        ("1.0 >= 1", "true"),
        ("'a' < 'b'", "true"),
        ("b'a' < b'b'", "true"),
        ("false < true", "true"),
        ("dyn(1) == 1.0", "true"),
        ("dyn(1u) == 1", "true"),
        ("dyn('1') == 1", "false"),
        ("[1, 2] == [1, 2]", "true"),
        ("{'a': 1} == {'a': 1}", "true"),
        ("{'a': 1} != {'a': 2}", "true"),
        ("null == null", "true"),
        ("dyn(0.0/0.0) == dyn(0.0/0.0)", "false"),
        ("duration('1m') < duration('2m')", "true"),
        ("timestamp('2024-01-01T00:00:00Z') < timestamp('2024-01-02T00:00:00Z')", "true"),
    ]);
}

#[test]
fn logic_absorbs_errors_from_either_side() {
    check(&[
        ("false && 1/0 == 1", "false"),
        ("1/0 == 1 && false", "false"),
        ("true || 1/0 == 1", "true"),
        ("1/0 == 1 || true", "true"),
        ("1/0 == 1 && true", "error: division by zero"),
        ("true ? 1 : 1/0", "1"),
        ("false ? 1/0 : 2", "2"),
        ("1/0 == 1 ? 1 : 2", "error: division by zero"),
        ("[1, 2, 0].all(x, 4 / x > 1)", "error: division by zero"),
        ("[0, 1].exists(x, 4 / x == 4)", "true"),
        ("[1, 0].all(x, 4 / x > 3)", "error: division by zero"),
        ("[0, 2].all(x, x > 0 && 4 / x == 2)", "false"),
    ]);
}

#[test]
fn macros() {
    check(&[
        ("[1, 2, 3].all(x, x > 0)", "true"),
        ("[1, 2, 3].exists(x, x > 2)", "true"),
        ("[1, 2, 3].exists_one(x, x > 2)", "true"),
        ("[1, 2, 3].existsOne(x, x > 1)", "false"),
        ("[1, 2, 3].map(x, x * 2)", "[2, 4, 6]"),
        ("[1, 2, 3].map(x, x > 1, x * 2)", "[4, 6]"),
        ("[1, 2, 3].filter(x, x != 2)", "[1, 3]"),
        ("{'a': 1, 'b': 2}.all(k, k.size() == 1)", "true"),
        ("{'a': 1, 'b': 2}.map(k, k + k)", "[aa, bb]"),
        ("[].all(x, false)", "true"),
        ("has(self.name)", "true"),
        ("has(self.nested.a)", "true"),
        ("has(self.labels.app)", "true"),
        ("has(self.labels.missing)", "false"),
        ("[1, 2].all(i, v, i < v)", "true"),
        ("{'a': 1}.exists(k, v, k == 'a' && v == 1)", "true"),
        ("[10, 20].transformList(i, v, i + v)", "[10, 21]"),
        ("{'a': 1}.transformMap(k, v, v + 1)", "{a: 2}"),
        ("[1, 2].transformMapEntry(i, v, {string(v): i})", "{1: 0, 2: 1}"),
    ]);
}

#[test]
fn object_fields_and_schema_types() {
    check(&[
        ("self.name == 'web'", "true"),
        ("self.replicas + 1", "4"),
        ("self.ratio * 2.0", "1"),
        ("self.enabled", "true"),
        ("self.tags.size()", "3"),
        ("'b' in self.tags", "true"),
        ("self.labels['app']", "web"),
        ("self.labels.tier", "front"),
        ("'app' in self.labels", "true"),
        ("self.labels.missing", "error: no such key: missing"),
        ("self.labels['missing']", "error: no such key: missing"),
        ("self.tags[5]", "error: index out of bounds: 5"),
        ("[1][5]", "error: index '5' out of range in list size '1'"),
        ("self.port == 'http'", "true"),
        ("self.timeout == duration('90s')", "true"),
        ("self.created.getFullYear()", "2024"),
        ("self.created.getMonth()", "0"),
        ("self.created.getDate()", "2"),
        ("self.created.getHours('+02:00')", "5"),
        ("self.data == b'hello'", "true"),
        ("self.nested.a < self.nested.b", "true"),
        ("self.ports.exists(p, p.name == 'https' && p.port == 443)", "true"),
        ("self.ports.map(p, p.port)", "[80, 443]"),
        ("self.set == [1, 2, 3]", "true"),
        ("self.tags == ['c', 'b', 'a']", "false"),
        ("self.foo__dash__bar", "dash"),
        ("self.__namespace__", "default"),
        ("type(self.port) == string", "true"),
        ("type(1) == int", "true"),
        ("type([]) == list", "true"),
    ]);
}

#[test]
fn conversions() {
    check(&[
        ("int('42')", "42"),
        ("int('x')", "error: strconv.ParseInt: parsing \"x\": invalid syntax"),
        ("int(2.9)", "2"),
        ("int(-2.9)", "-2"),
        ("int(1e20)", "error: integer overflow"),
        ("uint(-1)", "error: unsigned integer overflow"),
        ("double('1.5')", "1.5"),
        ("string(1.5)", "1.5"),
        ("string(1e21)", "1e+21"),
        ("string(true)", "true"),
        ("string(b'abc')", "abc"),
        ("string(b'\\xff')", "error: invalid UTF-8 in bytes, cannot convert to string"),
        ("bool('true')", "true"),
        ("bool('yes')", "error: strconv.ParseBool: parsing \"yes\": invalid syntax"),
        ("string(duration('1h'))", "3600s"),
        ("string(timestamp('2024-01-02T03:04:05Z'))", "2024-01-02T03:04:05Z"),
        ("int(timestamp('1970-01-01T00:01:00Z'))", "60"),
        ("duration('1h') + duration('30m') == duration('90m')", "true"),
        ("timestamp('2024-01-01T00:00:00Z') + duration('24h') == timestamp('2024-01-02T00:00:00Z')", "true"),
        ("timestamp('2024-01-02T00:00:00Z') - timestamp('2024-01-01T00:00:00Z')", "86400s"),
        ("duration('90m').getHours()", "1"),
        ("duration('90m').getMinutes()", "90"),
    ]);
}

#[test]
fn strings_extension() {
    check(&[
        ("'hello'.charAt(1)", "e"),
        ("'hello'.charAt(5)", ""),
        ("'hello'.charAt(6)", "error: index out of range: 6"),
        ("'hello mellow'.indexOf('ello')", "1"),
        ("'hello mellow'.indexOf('ello', 2)", "7"),
        ("'hello mellow'.indexOf('jello')", "-1"),
        ("'hello mellow'.lastIndexOf('ello')", "7"),
        ("'hello mellow'.lastIndexOf('ello', 6)", "1"),
        ("'hello'.lastIndexOf('')", "5"),
        ("'TacoCat'.lowerAscii()", "tacocat"),
        ("'TacoCÆt'.upperAscii()", "TACOCÆT"),
        ("'hello hello'.replace('he', 'we')", "wello wello"),
        ("'hello hello'.replace('he', 'we', 1)", "wello hello"),
        ("'hello'.replace('', '_')", "_h_e_l_l_o_"),
        ("'a,b,c'.split(',')", "[a, b, c]"),
        ("'a,b,c'.split(',', 2)", "[a, b,c]"),
        ("'abc'.split('')", "[a, b, c]"),
        ("'a,b'.split(',', 0)", "[]"),
        ("'tacocat'.substring(4)", "cat"),
        ("'tacocat'.substring(0, 4)", "taco"),
        ("'tacocat'.substring(4, 2)", "error: invalid substring range. start: 4, end: 2"),
        ("'tacocat'.substring(8)", "error: index out of range: 8"),
        ("'  \\ttrim\\n '.trim()", "trim"),
        ("['a', 'b'].join()", "ab"),
        ("['a', 'b'].join('-')", "a-b"),
        ("strings.quote('a\"b\\n')", "\"a\\\"b\\n\""),
        ("'%s is %d years and %.2f%%'.format(['Bob', 42, 1.5])", "Bob is 42 years and 1.50%"),
        ("'%x %X %o %b'.format([255, 255, 8, 5])", "ff FF 10 101"),
        ("'%s'.format([[1, 2]])", "[1, 2]"),
        ("'%d'.format(['x'])", "error: error during formatting: decimal clause can only be used on integers, was given string"),
        ("'abc'.matches('^a.c$')", "true"),
        ("matches('abc', 'b')", "true"),
        ("'abc'.contains('bc')", "true"),
        ("'abc'.startsWith('ab')", "true"),
        ("'abc'.endsWith('bc')", "true"),
    ]);
}

#[test]
fn kubernetes_lists_and_sets() {
    check(&[
        ("[1, 2, 3].isSorted()", "true"),
        ("[3, 1].isSorted()", "false"),
        ("['a', 'b'].isSorted()", "true"),
        ("[1, 2, 3].sum()", "6"),
        ("[1.5, 2.5].sum()", "4"),
        ("[duration('1m'), duration('2m')].sum() == duration('3m')", "true"),
        ("[1, 5, 3].max()", "5"),
        ("[1, 5, 3].min()", "1"),
        ("['b', 'a'].min()", "a"),
        ("[].min()", "error: min called on empty list"),
        ("[1, 2, 1].indexOf(1)", "0"),
        ("[1, 2, 1].lastIndexOf(1)", "2"),
        ("[1, 2].indexOf(3)", "-1"),
        ("sets.contains([1, 2, 3], [3, 1])", "true"),
        ("sets.equivalent([1, 2, 1], [2, 1])", "true"),
        ("sets.intersects([1, 2], [3])", "false"),
    ]);
}

#[test]
fn kubernetes_regex_urls_quantities() {
    check(&[
        ("'abc 123 def 456'.find('[0-9]+')", "123"),
        ("'abc'.find('[0-9]+')", ""),
        ("'abc 123 def 456'.findAll('[0-9]+')", "[123, 456]"),
        ("'abc 123 def 456'.findAll('[0-9]+', 1)", "[123]"),
        ("'abc'.find('[')", "error: Illegal regex: error parsing regexp: missing closing ]: `[`"),
        ("isURL('https://example.com:80/path?a=b')", "true"),
        ("isURL('example.com')", "false"),
        ("url('https://user@example.com:8080/a%20b?x=1&x=2').getHost()", "example.com:8080"),
        ("url('https://example.com:8080/').getHostname()", "example.com"),
        ("url('https://example.com:8080/').getPort()", "8080"),
        ("url('https://[::1]:80/').getHostname()", "::1"),
        ("url('https://example.com/a%20b').getEscapedPath()", "/a%20b"),
        ("url('https://example.com/?x=1&x=2&y=').getQuery()", "{x: [1, 2], y: []}"),
        ("url('https://example.com').getScheme()", "https"),
        ("url('x')", "error: URL parse error during conversion from string: parse \"x\": invalid URI for request"),
        ("quantity('1Gi').isGreaterThan(quantity('1G'))", "true"),
        ("quantity('1k') == quantity('1000')", "true"),
        ("quantity('500m').asApproximateFloat()", "0.5"),
        ("quantity('1.5Gi').asInteger()", "1610612736"),
        ("quantity('500m').isInteger()", "false"),
        ("quantity('500m').asInteger()", "error: cannot convert value to integer"),
        ("quantity('1').add(quantity('500m')).compareTo(quantity('1500m'))", "0"),
        ("quantity('2').sub(3).compareTo(quantity('-1'))", "0"),
        ("sign(quantity('-5'))", "-1"),
        ("isQuantity('1Xi')", "false"),
        ("quantity('x')", "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ]);
}

#[test]
fn kubernetes_ip_cidr_and_formats() {
    check(&[
        ("isIP('192.168.0.1')", "true"),
        ("isIP('192.168.00.1')", "false"),
        ("ip('192.168.0.1').family()", "4"),
        ("ip('::1').family()", "6"),
        ("ip('127.0.0.1').isLoopback()", "true"),
        ("ip('169.254.1.1').isLinkLocalUnicast()", "true"),
        ("ip('224.0.0.1').isLinkLocalMulticast()", "true"),
        ("ip('8.8.8.8').isGlobalUnicast()", "true"),
        ("ip('0.0.0.0').isUnspecified()", "true"),
        ("ip.isCanonical('2001:db8::1')", "true"),
        ("ip.isCanonical('2001:DB8::1')", "false"),
        ("string(ip('2001:db8:0:0::1'))", "2001:db8::1"),
        ("ip('1.2.3.4') == ip('1.2.3.4')", "true"),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", "true"),
        ("cidr('10.0.0.0/8').containsIP(ip('11.1.2.3'))", "false"),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", "true"),
        ("cidr('10.0.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", "false"),
        ("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", "true"),
        ("cidr('10.1.2.3/8').prefixLength()", "8"),
        ("cidr('10.1.2.3/8').ip() == ip('10.1.2.3')", "true"),
        ("isCIDR('10.0.0.0/33')", "false"),
        ("string(cidr('::1/128'))", "::1/128"),
        ("format.dns1123Label().validate('my-name').hasValue()", "false"),
        ("format.dns1123Label().validate('My_Name').value().size() > 0", "true"),
        ("format.named('dns1123Subdomain').value().validate('a.b').hasValue()", "false"),
        ("format.named('nope').hasValue()", "false"),
        ("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", "false"),
        ("format.labelValue().validate('-bad').hasValue()", "true"),
    ]);
}

#[test]
fn optionals() {
    check(&[
        ("optional.of(1).value()", "1"),
        ("optional.none().hasValue()", "false"),
        ("optional.none().orValue(5)", "5"),
        ("optional.of(1).or(optional.of(2)).value()", "1"),
        ("optional.ofNonZeroValue(0).hasValue()", "false"),
        ("self.?labels.?app.orValue('none')", "web"),
        ("self.?labels.?missing.orValue('none')", "none"),
        ("self.labels[?'app'].hasValue()", "true"),
        ("self.tags[?9].hasValue()", "false"),
        ("self.?nested.a.value()", "1"),
        ("optional.none().value()", "error: optional.none() dereference"),
        ("[1, ?optional.none(), ?optional.of(3)]", "[1, 3]"),
        ("optional.of(2).optMap(x, x * 2).value()", "4"),
    ]);
}
