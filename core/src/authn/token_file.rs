//! Static bearer tokens (`--token-auth-file`), in kube-apiserver's CSV format: one
//! record a line, `token,user,uid[,"group1,group2"]`, read as Go's encoding/csv reads
//! it (quoted fields with `""` for a quote, blank lines skipped, a bare quote in an
//! unquoted field an error).

use super::UserInfo;
use std::collections::HashMap;

/// The users of a token file, by token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenFile {
    users: HashMap<String, UserInfo>,
}

impl TokenFile {
    /// Read the file at `path` (named in errors) holding `text`. Records with an empty
    /// token are skipped, and a token given twice takes its last record, as upstream
    /// does; both are logged.
    pub fn parse(path: &str, text: &str) -> Result<TokenFile, String> {
        let mut users = HashMap::new();
        for (number, record) in records(text)?.into_iter().enumerate() {
            let number = number + 1;
            if record.len() < 3 {
                return Err(format!(
                    "token file '{path}' must have at least 3 columns (token, user name, user uid), found {}",
                    record.len()
                ));
            }
            if record[0].is_empty() {
                tracing::warn!("empty token has been found in token file '{path}', record number '{number}'");
                continue;
            }
            let groups = match record.get(3) {
                Some(groups) => groups.split(',').map(str::to_owned).collect(),
                None => Vec::new(),
            };
            let user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                groups,
                ..UserInfo::default()
            };
            if users.insert(record[0].clone(), user).is_some() {
                tracing::warn!("duplicate token has been found in token file '{path}', record number '{number}'");
            }
        }
        Ok(TokenFile { users })
    }

    /// The user a bearer token names, if the file has it.
    pub fn user(&self, token: &str) -> Option<&UserInfo> {
        self.users.get(token)
    }

    /// How many tokens the file holds.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// The records of a CSV text, as Go's encoding/csv reads them with its defaults (any
/// number of fields a record).
fn records(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        // Blank lines are not records.
        if matches!(chars.peek(), Some('\n')) {
            chars.next();
            line += 1;
            continue;
        }
        if chars.peek() == Some(&'\r') {
            let mut ahead = chars.clone();
            ahead.next();
            if matches!(ahead.peek(), Some('\n') | None) {
                chars.next();
                continue;
            }
        }
        let start = line;
        let mut record = Vec::new();
        let mut field = String::new();
        let mut column = 0;
        loop {
            column += 1;
            if chars.peek() == Some(&'"') {
                chars.next();
                // A quoted field runs to its closing quote, newlines and commas included.
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                        None => return Err(format!("record on line {start}; parse error on line {line}, column {column}: extraneous or missing \" in quoted-field")),
                    }
                }
                match chars.peek() {
                    None | Some(',') | Some('\n') | Some('\r') => {}
                    Some(_) => return Err(format!("parse error on line {line}, column {column}: extraneous or missing \" in quoted-field")),
                }
            } else {
                while let Some(&c) = chars.peek() {
                    match c {
                        ',' | '\n' => break,
                        '\r' => {
                            let mut ahead = chars.clone();
                            ahead.next();
                            if matches!(ahead.peek(), Some('\n') | None) {
                                break;
                            }
                            field.push(c);
                            chars.next();
                        }
                        '"' => return Err(format!("parse error on line {line}, column {column}: bare \" in non-quoted-field")),
                        c => {
                            field.push(c);
                            chars.next();
                        }
                    }
                }
            }
            record.push(std::mem::take(&mut field));
            match chars.next() {
                Some(',') => continue,
                Some('\r') => {
                    chars.next_if_eq(&'\n');
                    line += 1;
                    break;
                }
                Some('\n') => {
                    line += 1;
                    break;
                }
                _ => break,
            }
        }
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_users_and_groups() {
        let file = TokenFile::parse(
            "tokens.csv",
            "secret1,alice,1001,\"dev,ops\"\n\nsecret2,bob,1002\r\n,nobody,1003\nsecret2,bob2,1004\n",
        )
        .unwrap();
        assert_eq!(file.len(), 2);
        assert_eq!(file.user("secret1").unwrap().name, "alice");
        assert_eq!(file.user("secret1").unwrap().groups, ["dev", "ops"]);
        assert_eq!(file.user("secret2").unwrap().name, "bob2", "the last record wins");
        assert!(file.user("secret2").unwrap().groups.is_empty());
        assert!(file.user("").is_none());
        assert!(file.user("secret3").is_none());
    }

    #[test]
    fn bad_files_are_refused_with_upstreams_words() {
        assert_eq!(
            TokenFile::parse("t.csv", "secret,alice\n").unwrap_err(),
            "token file 't.csv' must have at least 3 columns (token, user name, user uid), found 2"
        );
        assert!(TokenFile::parse("t.csv", "sec\"ret,alice,1\n").unwrap_err().contains("bare \""));
        assert!(TokenFile::parse("t.csv", "\"secret,alice,1\n").unwrap_err().contains("extraneous or missing"));
        // Quotes inside a quoted field are doubled.
        let file = TokenFile::parse("t.csv", "\"a\"\"b\",carol,7\n").unwrap();
        assert_eq!(file.user("a\"b").unwrap().name, "carol");
    }
}
