//! Fast paths over the JSON objects storage holds: serve them with their
//! `resourceVersion` filled in, and without `kind`/`apiVersion` as list items, by
//! splicing bytes instead of parsing and re-encoding the object.
//!
//! Only what the core itself wrote is spliced: a JSON object whose `metadata` is an
//! object without a `resourceVersion`. Anything else returns `None`, and the caller
//! takes the parsing path, so a surprise in stored bytes costs time, never correctness.

/// One member of a JSON object: where its key (with quotes) and value lie.
struct Member {
    key: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (which must be a quote), past its closing quote.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of the JSON value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The members of the object `b[start..]`, and the end of the object.
fn members(b: &[u8], start: usize) -> Option<(Vec<Member>, usize)> {
    let mut i = skip_ws(b, start);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut out = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Some((out, i + 1));
    }
    loop {
        let key_end = skip_string(b, i)?;
        let key = i..key_end;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(b, i + 1);
        let value_end = skip_value(b, value_start)?;
        out.push(Member {
            key,
            value: value_start..value_end,
        });
        i = skip_ws(b, value_end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some((out, i + 1)),
            _ => return None,
        }
    }
}

/// The metadata keys Go's `ObjectMeta` writes before `resourceVersion`.
const BEFORE_RESOURCE_VERSION: &[&[u8]] = &[b"\"name\"", b"\"generateName\"", b"\"namespace\"", b"\"selfLink\"", b"\"uid\""];

/// `stored` with `metadata.resourceVersion` set to `revision`, and without the top-level
/// `kind` and `apiVersion` when `drop_type` (built-in list items carry neither).
///
/// The resourceVersion goes where the object's writer would have put it: a built-in
/// object is stored as Go writes its type (`kind` first, [`crate::typed_json`]), so it
/// goes after the `uid`; others have sorted keys, so it goes in sorted place.
pub fn serve(stored: &[u8], revision: u64, drop_type: bool) -> Option<Vec<u8>> {
    let (top, end) = members(stored, 0)?;
    if skip_ws(stored, end) != stored.len() {
        return None;
    }
    let go_order = top.first().is_some_and(|m| &stored[m.key.clone()] == b"\"kind\"");
    let goes_before = |key: &[u8]| {
        if go_order {
            !BEFORE_RESOURCE_VERSION.contains(&key)
        } else {
            key > &b"\"resourceVersion\""[..]
        }
    };
    let mut out = Vec::with_capacity(stored.len() + 32);
    out.push(b'{');
    let mut saw_metadata = false;
    for m in &top {
        let key = &stored[m.key.clone()];
        if drop_type && (key == b"\"kind\"" || key == b"\"apiVersion\"") {
            continue;
        }
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(key);
        out.push(b':');
        if key == b"\"metadata\"" {
            let (meta, meta_end) = members(stored, m.value.start)?;
            if meta_end != m.value.end || meta.iter().any(|f| &stored[f.key.clone()] == b"\"resourceVersion\"") {
                return None;
            }
            saw_metadata = true;
            out.push(b'{');
            let mut placed = false;
            let mut first = true;
            for f in &meta {
                let key = &stored[f.key.clone()];
                if !placed && goes_before(key) {
                    resource_version(&mut out, revision, &mut first);
                    placed = true;
                }
                if !std::mem::replace(&mut first, false) {
                    out.push(b',');
                }
                out.extend_from_slice(&stored[f.key.start..f.value.end]);
            }
            if !placed {
                resource_version(&mut out, revision, &mut first);
            }
            out.push(b'}');
        } else {
            out.extend_from_slice(&stored[m.value.clone()]);
        }
    }
    out.push(b'}');
    saw_metadata.then_some(out)
}

fn resource_version(out: &mut Vec<u8>, revision: u64, first: &mut bool) {
    if !std::mem::replace(first, false) {
        out.push(b',');
    }
    out.extend_from_slice(b"\"resourceVersion\":\"");
    out.extend_from_slice(revision.to_string().as_bytes());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::serve;
    use serde_json::{json, Value};

    fn served(stored: &Value, rv: u64, drop: bool) -> Option<Value> {
        serve(stored.to_string().as_bytes(), rv, drop).map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn sets_the_resource_version_and_drops_type_fields() {
        let stored = json!({"apiVersion": "v1", "data": {"k": "a,}\"{"}, "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"x": "[y]"}}, "list": [1, {"a": [2]}], "n": -1.5e3, "t": true});
        let mut want = stored.clone();
        want["metadata"]["resourceVersion"] = json!("42");
        assert_eq!(served(&stored, 42, false), Some(want.clone()));
        let obj = want.as_object_mut().unwrap();
        obj.remove("kind");
        obj.remove("apiVersion");
        assert_eq!(served(&stored, 42, true), Some(want));
        assert_eq!(
            served(&json!({"metadata": {}}), 7, false),
            Some(json!({"metadata": {"resourceVersion": "7"}}))
        );
    }

    #[test]
    fn the_resource_version_goes_where_the_writer_puts_it() {
        let go = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","uid":"u","creationTimestamp":null}}"#;
        let served = String::from_utf8(serve(go, 7, false).unwrap()).unwrap();
        assert_eq!(served, r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"7","creationTimestamp":null}}"#);
        let sorted = br#"{"apiVersion":"x/v1","kind":"W","metadata":{"name":"a","namespace":"n","uid":"u"}}"#;
        let served = String::from_utf8(serve(sorted, 7, false).unwrap()).unwrap();
        assert_eq!(served, r#"{"apiVersion":"x/v1","kind":"W","metadata":{"name":"a","namespace":"n","resourceVersion":"7","uid":"u"}}"#);
        let only_name = br#"{"kind":"K","metadata":{"name":"a"}}"#;
        assert_eq!(serve(only_name, 1, true).unwrap(), br#"{"metadata":{"name":"a","resourceVersion":"1"}}"#.to_vec());
    }

    #[test]
    fn anything_unexpected_takes_the_parsing_path() {
        for bad in [
            &b""[..],
            b"[]",
            b"{\"metadata\":[]}",
            b"{\"kind\":\"x\"}",
            b"{\"metadata\":{\"resourceVersion\":\"1\"}}",
            b"{\"metadata\":{}} x",
            b"{\"metadata\":{\"a\":\"unterminated}}",
            b"{\"metadata\":{},}",
            b"{\"a\" 1}",
        ] {
            assert_eq!(serve(bad, 1, false), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
