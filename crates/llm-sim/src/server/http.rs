//! Just enough HTTP/1.1 for the fake API: requests with a content-length or chunked body on
//! a kept-alive connection, JSON answers, and chunked event streams flushed event by event.
//!
//! Every length a client sends is checked before it is used, with no arithmetic that can
//! overflow: the head, each line and the trailers are capped at `MAX_HEAD`, the body at
//! `MAX_BODY`, so a hostile client costs at most that much memory. (hyper would do this
//! too, but its server side needs features and two crates this crate otherwise lacks,
//! and the fake server's timeouts hold a connection silent in a way a service function does
//! not express; a parser this size is cheaper to keep bounded.)

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longer heads are refused: no client of an LLM API sends one.
const MAX_HEAD: usize = 64 * 1024;
/// Larger bodies are refused; real APIs take a few tens of megabytes at most.
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub method: String,
    /// Without the query string.
    pub path: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the client asked to close the connection after this exchange.
    pub fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|value| value.eq_ignore_ascii_case("close"))
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The client closed the connection, or it broke.
    Closed,
    /// The request is not one we can read; answer with this status and close.
    Bad(u16, &'static str),
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> Self {
        Self::Closed
    }
}

/// A connection with the bytes read past the previous request.
pub(crate) struct Connection {
    socket: TcpStream,
    buffer: Vec<u8>,
}

impl Connection {
    pub fn new(socket: TcpStream) -> Self {
        Self {
            socket,
            buffer: Vec::new(),
        }
    }

    async fn fill(&mut self) -> Result<(), ReadError> {
        let mut piece = [0u8; 8192];
        let read = self.socket.read(&mut piece).await?;
        if read == 0 {
            return Err(ReadError::Closed);
        }
        self.buffer.extend_from_slice(&piece[..read]);
        Ok(())
    }

    /// Bytes up to and including the next CRLF; an error when `limit` bytes pass first.
    async fn line(&mut self, limit: usize) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\r\n") {
                return Ok(self.buffer.drain(..end + 2).collect());
            }
            if self.buffer.len() > limit {
                return Err(ReadError::Bad(431, "request line or header too long"));
            }
            self.fill().await?;
        }
    }

    async fn exact(&mut self, length: usize) -> Result<Vec<u8>, ReadError> {
        while self.buffer.len() < length {
            self.fill().await?;
        }
        Ok(self.buffer.drain(..length).collect())
    }

    pub async fn read_request(&mut self) -> Result<HttpRequest, ReadError> {
        let head_end = loop {
            if let Some(end) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
            if self.buffer.len() > MAX_HEAD {
                return Err(ReadError::Bad(431, "request head too long"));
            }
            self.fill().await?;
        };
        let head: Vec<u8> = self.buffer.drain(..head_end + 4).collect();
        let head = String::from_utf8_lossy(&head[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next().unwrap_or_default().split(' ');
        let (Some(method), Some(target)) = (request_line.next(), request_line.next()) else {
            return Err(ReadError::Bad(400, "malformed request line"));
        };
        let path = target.split('?').next().unwrap_or_default().to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        let mut request = HttpRequest {
            method: method.to_owned(),
            path,
            headers,
            body: Vec::new(),
        };
        if request
            .header("expect")
            .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"))
        {
            self.socket
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await?;
        }
        let chunked = request
            .header("transfer-encoding")
            .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
        if chunked {
            request.body = self.chunked_body().await?;
        } else if let Some(length) = request.header("content-length") {
            let length: usize = length
                .parse()
                .map_err(|_| ReadError::Bad(400, "invalid content-length"))?;
            if length > MAX_BODY {
                return Err(ReadError::Bad(413, "request body too large"));
            }
            request.body = self.exact(length).await?;
        }
        Ok(request)
    }

    async fn chunked_body(&mut self) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.line(1024).await?;
            let size = String::from_utf8_lossy(&line);
            let size = size.trim().split(';').next().unwrap_or_default();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| ReadError::Bad(400, "invalid chunk size"))?;
            if size == 0 {
                // Trailers, if any, end with an empty line; together they are a head's worth
                // at most.
                let mut trailers = 0usize;
                loop {
                    let line = self.line(MAX_HEAD).await?.len();
                    trailers += line;
                    if line <= 2 {
                        return Ok(body);
                    }
                    if trailers > MAX_HEAD {
                        return Err(ReadError::Bad(431, "request trailers too long"));
                    }
                }
            }
            // Compared without adding: a size near usize::MAX (`ffffffffffffffff`) must be
            // refused, not wrap past the cap.
            if size > MAX_BODY - body.len() {
                return Err(ReadError::Bad(413, "request body too large"));
            }
            body.extend(self.exact(size).await?);
            self.exact(2).await?;
        }
    }

    /// Writes a whole response with a content-length.
    pub async fn respond(
        &mut self,
        status: u16,
        headers: &[(String, String)],
        body: &[u8],
        close: bool,
    ) -> io::Result<()> {
        let mut head = status_line(status);
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("content-length: {}\r\n", body.len()));
        if close {
            head.push_str("connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.socket.write_all(&bytes).await?;
        self.socket.flush().await
    }

    /// Starts a chunked event stream.
    pub async fn start_stream(&mut self, headers: &[(String, String)]) -> io::Result<()> {
        let mut head = status_line(200);
        head.push_str("content-type: text/event-stream; charset=utf-8\r\n");
        head.push_str("cache-control: no-cache\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        self.socket.write_all(head.as_bytes()).await?;
        self.socket.flush().await
    }

    /// Sends one piece of a chunked body, at once.
    pub async fn chunk(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut framed = format!("{:x}\r\n", data.len()).into_bytes();
        framed.extend_from_slice(data);
        framed.extend_from_slice(b"\r\n");
        self.socket.write_all(&framed).await?;
        self.socket.flush().await
    }

    pub async fn end_stream(&mut self) -> io::Result<()> {
        self.socket.write_all(b"0\r\n\r\n").await?;
        self.socket.flush().await
    }

    /// Waits until the client goes away, sending nothing: a server that never answers.
    pub async fn hold(&mut self) {
        let mut piece = [0u8; 1024];
        while matches!(self.socket.read(&mut piece).await, Ok(read) if read > 0) {}
    }
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Site Overloaded",
        _ => "Error",
    };
    format!("HTTP/1.1 {status} {reason}\r\n")
}
