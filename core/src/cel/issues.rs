//! Parse and check errors, printed as cel-go prints them: each as
//! `ERROR: <input>:line:column: message`, followed by the offending line and a caret
//! under the column, sorted by position, at most 100 of them.

/// One error at a code point offset of the source (`None`: no position, printed as
/// line -1, column 0 as cel-go does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub offset: Option<u32>,
    pub message: String,
}

/// The errors of one expression.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Issues {
    pub errors: Vec<Issue>,
}

/// cel-go stops listing errors after this many.
const MAX_REPORTED: usize = 100;
/// cel-go prints no snippet for lines longer than this.
const MAX_SNIPPET: usize = 16384;

impl Issues {
    pub fn push(&mut self, offset: Option<u32>, message: impl Into<String>) {
        self.errors.push(Issue {
            offset,
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The display form of every error against `source`.
    pub fn render(&self, source: &str) -> String {
        let lines: Vec<&str> = source.split('\n').collect();
        let line_starts = line_starts(source);
        let mut located: Vec<(i64, usize, &Issue)> = self
            .errors
            .iter()
            .map(|issue| match issue.offset {
                Some(offset) => {
                    let (line, column) = locate(&line_starts, offset);
                    (line as i64, column, issue)
                }
                None => (-1, usize::MAX, issue),
            })
            .collect();
        located.sort_by(|a, b| (a.0, col_key(a.1)).cmp(&(b.0, col_key(b.1))));
        let mut out = Vec::new();
        for (line, column, issue) in located.iter().take(MAX_REPORTED) {
            if *line < 0 {
                out.push(format!("ERROR: <input>:-1:0: {}", issue.message));
                continue;
            }
            let mut text = format!("ERROR: <input>:{}:{}: {}", line, column + 1, issue.message);
            if let Some(snippet) = lines.get(*line as usize - 1) {
                let snippet = snippet.strip_suffix('\r').unwrap_or(snippet);
                if snippet.len() <= MAX_SNIPPET {
                    let snippet = snippet.replace('\t', " ");
                    text.push_str("\n | ");
                    text.push_str(&snippet);
                    text.push_str("\n | ");
                    let mut chars = snippet.chars();
                    for _ in 0..*column {
                        match chars.next() {
                            Some(c) if c.len_utf8() > 1 => text.push('\u{ff0e}'),
                            Some(_) => text.push('.'),
                            None => break,
                        }
                    }
                    match chars.next() {
                        Some(c) if c.len_utf8() > 1 => text.push('\u{ff3e}'),
                        _ => text.push('^'),
                    }
                }
            }
            out.push(text);
        }
        if self.errors.len() > MAX_REPORTED {
            out.push(format!("{} more errors were truncated", self.errors.len() - MAX_REPORTED));
        }
        out.join("\n")
    }
}

/// Errors without a position sort as cel-go's column -1 does: first on their line.
fn col_key(column: usize) -> i64 {
    if column == usize::MAX {
        -1
    } else {
        column as i64
    }
}

/// Code point offsets at which the lines after the first start.
pub fn line_starts(source: &str) -> Vec<u32> {
    source
        .chars()
        .enumerate()
        .filter(|(_, c)| *c == '\n')
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

fn locate(line_starts: &[u32], offset: u32) -> (usize, usize) {
    let line = line_starts.partition_point(|&start| start <= offset);
    let start = if line == 0 { 0 } else { line_starts[line - 1] };
    (line + 1, (offset - start) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_under_the_column() {
        let mut issues = Issues::default();
        issues.push(Some(6), "undeclared reference to 'foo' (in container '')");
        assert_eq!(
            issues.render("1 + 2 + foo"),
            "ERROR: <input>:1:7: undeclared reference to 'foo' (in container '')\n | 1 + 2 + foo\n | ......^"
        );
    }

    #[test]
    fn sorted_by_line_then_column_and_wide_characters_widen_the_dots() {
        let mut issues = Issues::default();
        issues.push(Some(6), "second");
        issues.push(Some(1), "first");
        assert_eq!(
            issues.render("é\nabcdefg"),
            "ERROR: <input>:1:2: first\n | é\n | \u{ff0e}^\nERROR: <input>:2:5: second\n | abcdefg\n | ....^"
        );
    }

    #[test]
    fn no_position_prints_line_minus_one() {
        let mut issues = Issues::default();
        issues.push(None, "expression recursion limit exceeded: 250");
        assert_eq!(issues.render("x"), "ERROR: <input>:-1:0: expression recursion limit exceeded: 250");
    }
}
