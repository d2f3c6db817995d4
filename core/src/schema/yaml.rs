//! Duplicate keys of a YAML body, as go-yaml's strict mode reports them:
//! `line 10: key "paused" already set in map`, one per repeated key, in document order.
//!
//! kube-apiserver converts YAML to JSON (last key wins) and, when field validation is on,
//! converts it once more strictly to find duplicate keys. serde_yaml keeps no positions
//! for a visitor, so this is a scanner of block-style YAML: it follows indentation, list
//! items and block scalars. Duplicates inside flow mappings (`{a: 1, a: 2}`) are not seen.

/// `(line, key)` of every key given again in the same mapping; lines count from 1.
pub(crate) fn duplicate_keys(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // Open mappings, innermost last: the column of their keys and the keys seen.
    let mut stack: Vec<(usize, Vec<String>)> = Vec::new();
    // Inside a block scalar: lines indented deeper than this column belong to it.
    let mut block_scalar: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(col) = block_scalar {
            if indent > col {
                continue;
            }
            block_scalar = None;
        }
        if indent == 0 && (trimmed.starts_with("---") || trimmed.starts_with("...")) {
            stack.clear();
            continue;
        }
        // List items: each `- ` opens a new mapping at the column after it.
        let mut col = indent;
        let mut content = trimmed;
        let mut new_item = false;
        while let Some(rest) = content
            .strip_prefix("- ")
            .or_else(|| (content == "-").then_some(""))
        {
            let skipped = content.len() - rest.len();
            let rest_trimmed = rest.trim_start_matches(' ');
            col += skipped + (rest.len() - rest_trimmed.len());
            content = rest_trimmed;
            new_item = true;
        }
        let Some((key, value)) = split_key(content) else {
            continue;
        };
        if new_item {
            stack.retain(|(c, _)| *c < col);
            stack.push((col, vec![key.clone()]));
        } else {
            stack.retain(|(c, _)| *c <= col);
            match stack.last_mut() {
                Some((c, keys)) if *c == col => {
                    if keys.contains(&key) {
                        found.push((index + 1, key.clone()));
                    } else {
                        keys.push(key.clone());
                    }
                }
                _ => stack.push((col, vec![key.clone()])),
            }
        }
        let value = value.trim();
        if value.starts_with('|') || value.starts_with('>') {
            block_scalar = Some(col);
        }
    }
    found
}

/// `key: value` → the key (unquoted) and the rest of the line.
fn split_key(content: &str) -> Option<(String, &str)> {
    if let Some(q @ ('"' | '\'')) = content.chars().next() {
        let close = content[1..].find(q)? + 1;
        let key = content[1..close].to_owned();
        let rest = content[close + 1..].trim_start_matches(' ');
        let value = rest.strip_prefix(':')?;
        return (value.is_empty() || value.starts_with(' ')).then_some((key, value));
    }
    if content.starts_with(['{', '[', '&', '*', '!', '|', '>', '%', '@', '`']) {
        return None;
    }
    let mut search = 0;
    while let Some(i) = content[search..].find(':') {
        let at = search + i;
        let after = &content[at + 1..];
        if after.is_empty() || after.starts_with(' ') {
            let key = content[..at].trim_end();
            if key.contains(" #") {
                return None;
            }
            return Some((key.to_owned(), after));
        }
        search = at + 1;
    }
    None
}
