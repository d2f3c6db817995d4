//! Reading back what the server wrote: HTTP/1.1 responses, whole or chunked.

use bytes::Bytes;

/// One response, taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    /// Header names lower-cased, in the order written.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Reply {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// The one response in `bytes`, for tests: panics, showing the bytes, when there is not
/// exactly one well-formed response.
pub fn single_reply(bytes: &[u8]) -> Reply {
    match parse_responses(bytes) {
        Ok(mut replies) if replies.len() == 1 => replies.remove(0),
        other => panic!("expected one response, got {other:?}: {}", String::from_utf8_lossy(bytes)),
    }
}

/// Every whole response in `bytes`, in order; `Err` names the first thing that is not
/// well-formed HTTP/1.1 (a truncated last response included).
pub fn parse_responses(mut bytes: &[u8]) -> Result<Vec<Reply>, String> {
    let mut replies = Vec::new();
    while !bytes.is_empty() {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        let head_len = match response.parse(bytes) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err("a truncated response head".into()),
            Err(e) => return Err(format!("a bad response head: {e}")),
        };
        let status = response.code.ok_or("no status code")?;
        let headers: Vec<(String, String)> = response
            .headers
            .iter()
            .map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).into_owned()))
            .collect();
        bytes = &bytes[head_len..];
        let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let body = if header("transfer-encoding") == Some("chunked") {
            let (body, rest) = dechunk(bytes)?;
            bytes = rest;
            body
        } else {
            let length = match header("content-length") {
                Some(l) => l.parse::<usize>().map_err(|_| format!("a bad Content-Length {l:?}"))?,
                None if status == 204 || status == 304 || status < 200 => 0,
                // No framing: the body runs to the end of the connection.
                None => bytes.len(),
            };
            if bytes.len() < length {
                return Err(format!("a body of {} bytes where {length} were announced", bytes.len()));
            }
            let body = bytes[..length].to_vec();
            bytes = &bytes[length..];
            body
        };
        replies.push(Reply {
            status,
            headers,
            body: Bytes::from(body),
        });
    }
    Ok(replies)
}

/// A chunked body and what follows it.
fn dechunk(mut bytes: &[u8]) -> Result<(Vec<u8>, &[u8]), String> {
    let mut body = Vec::new();
    loop {
        let line_end = bytes
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a truncated chunk size")?;
        let size = std::str::from_utf8(&bytes[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .ok_or("a bad chunk size")?;
        bytes = &bytes[line_end + 2..];
        if bytes.len() < size + 2 {
            return Err("a truncated chunk".into());
        }
        body.extend_from_slice(&bytes[..size]);
        bytes = &bytes[size + 2..];
        if size == 0 {
            return Ok((body, bytes));
        }
    }
}
