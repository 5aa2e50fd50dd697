//! The llm-core benchmark behind `cargo xtask bench llm`: SSE decoding throughput on a 10 MB
//! stream of each provider's protocol, and the client's per-request overhead against a local
//! server, compared with a bare hand-written HTTP/1.1 exchange with the same server.
//!
//! Prints one JSON object on stdout; progress goes to stderr.
use std::time::{Duration, Instant};

use llm_core::{HttpConfig, Provider, ProviderConfig, Request, WireFormat, decode_event_stream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const STREAM_BYTES: usize = 10 << 20;
const REQUESTS: usize = 300;

/// A text-only stream of about `STREAM_BYTES` in the provider's framing.
fn stream(format: WireFormat) -> Vec<u8> {
    let mut s = String::with_capacity(STREAM_BYTES + 4096);
    let piece = "the quick brown fox jumps over the lazy dog, \\\"quoted\\\" and caf\\u00e9 ";
    match format {
        WireFormat::Anthropic => {
            s.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n");
            s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
            while s.len() < STREAM_BYTES {
                s.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"");
                s.push_str(piece);
                s.push_str("\"}}\n\n");
            }
            s.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
            s.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":100}}\n\n");
            s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        }
        WireFormat::OpenAi => {
            while s.len() < STREAM_BYTES {
                s.push_str("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"");
                s.push_str(piece);
                s.push_str("\"},\"finish_reason\":null}]}\n\n");
            }
            s.push_str("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
            s.push_str("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":100,\"total_tokens\":110}}\n\n");
            s.push_str("data: [DONE]\n\n");
        }
    }
    s.into_bytes()
}

/// Best of five decodes, in MB/s.
fn throughput(format: WireFormat) -> f64 {
    let body = stream(format);
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        let events = decode_event_stream(format, &body).expect("the generated stream decodes");
        best = best.min(start.elapsed());
        assert!(events.len() > 1000, "the stream has many events");
    }
    body.len() as f64 / 1e6 / best.as_secs_f64()
}

const ANSWER: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}"#;

/// Answers every request on a connection with the same message, keeping it alive.
async fn serve(listener: TcpListener) {
    while let Ok((mut sock, _)) = listener.accept().await {
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            loop {
                // Read one request: headers, then content-length bytes of body.
                let (head_end, body_len) = loop {
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (end + 4, len);
                    }
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                while buf.len() < head_end + body_len {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                buf.drain(..head_end + body_len);
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{ANSWER}",
                    ANSWER.len()
                );
                if sock.write_all(response.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// One bare request/response on a kept-alive connection, with a body of the size the client
/// sends.
async fn bare(sock: &mut TcpStream, body: &str) {
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(request.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = sock.read(&mut chunk).await.expect("read");
        assert!(n > 0, "the server answers");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n")
            && buf.len() >= end + 4 + ANSWER.len()
        {
            return;
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    eprintln!("bench llm: decoding 10 MB streams");
    let anthropic = throughput(WireFormat::Anthropic);
    let openai = throughput(WireFormat::OpenAi);
    eprintln!("bench llm: {REQUESTS} requests against a local server");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (client_median, bare_median) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        tokio::spawn(serve(listener));
        let mut config = ProviderConfig::new(Provider::Anthropic);
        config.base_url = Some(format!("http://{addr}"));
        config.model = Some("m".to_owned());
        config.api_key_env = Some("ANTHROPIC_API_KEY".to_owned());
        let client = config
            .connect(HttpConfig::default(), &|name| {
                (name == "ANTHROPIC_API_KEY").then(|| "bench-key".to_owned())
            })
            .expect("a client");
        let request = Request::new("m").user("hello").max_tokens(16);
        let mut client_times = Vec::with_capacity(REQUESTS);
        for i in 0..REQUESTS + 20 {
            let start = Instant::now();
            client.complete(&request).await.expect("an answer");
            if i >= 20 {
                client_times.push(start.elapsed());
            }
        }
        let body = r#"{"model":"m","max_tokens":16,"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}"#;
        let mut sock = TcpStream::connect(addr).await.expect("connect");
        let mut bare_times = Vec::with_capacity(REQUESTS);
        for i in 0..REQUESTS + 20 {
            let start = Instant::now();
            bare(&mut sock, body).await;
            if i >= 20 {
                bare_times.push(start.elapsed());
            }
        }
        (median(client_times), median(bare_times))
    });
    let overhead = client_median.saturating_sub(bare_median);
    println!(
        "{{\"sse_mb_per_s\": {{\"anthropic\": {anthropic:.1}, \"openai\": {openai:.1}}}, \"request_us\": {{\"client\": {:.1}, \"bare_http\": {:.1}, \"overhead\": {:.1}, \"ratio\": {:.2}}}}}",
        client_median.as_secs_f64() * 1e6,
        bare_median.as_secs_f64() * 1e6,
        overhead.as_secs_f64() * 1e6,
        client_median.as_secs_f64() / bare_median.as_secs_f64().max(1e-9)
    );
}
