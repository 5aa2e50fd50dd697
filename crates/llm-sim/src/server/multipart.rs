//! Just enough `multipart/form-data` for the fake OpenAI files endpoint: the parts of a body,
//! each with its field name, file name and bytes. Bounded by the body, which the HTTP reader
//! has already capped.

/// One field of a form.
pub(crate) struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub data: Vec<u8>,
}

/// The parts of `body`, whose `content_type` names the boundary.
pub(crate) fn parse(content_type: &str, body: &[u8]) -> Result<Vec<Part>, String> {
    let boundary = content_type
        .split(';')
        .filter_map(|param| param.trim().strip_prefix("boundary="))
        .next()
        .map(|b| b.trim_matches('"'))
        .filter(|b| !b.is_empty())
        .ok_or("the content type is not multipart/form-data with a boundary")?;
    let delimiter = format!("--{boundary}").into_bytes();
    let mut rest = match find(body, &delimiter) {
        Some(start) => &body[start + delimiter.len()..],
        None => return Err("the body holds no part".to_owned()),
    };
    let mut parts = Vec::new();
    // After each delimiter: `--` ends the form, a line break starts a part.
    while !rest.starts_with(b"--") {
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("a part does not start on a new line")?;
        let head_end = find(rest, b"\r\n\r\n").ok_or("a part's headers do not end")?;
        let head = String::from_utf8_lossy(&rest[..head_end]).into_owned();
        rest = &rest[head_end + 4..];
        let mut end_marker = b"\r\n".to_vec();
        end_marker.extend_from_slice(&delimiter);
        let end = find(rest, &end_marker).ok_or("a part does not end with the boundary")?;
        let (name, filename) = disposition(&head)?;
        parts.push(Part {
            name,
            filename,
            data: rest[..end].to_vec(),
        });
        rest = &rest[end + end_marker.len()..];
    }
    Ok(parts)
}

/// The `name` and `filename` of a part's `content-disposition`.
fn disposition(head: &str) -> Result<(String, Option<String>), String> {
    let line = head
        .lines()
        .find(|line| {
            line.to_ascii_lowercase()
                .starts_with("content-disposition:")
        })
        .ok_or("a part has no content-disposition")?;
    let mut name = None;
    let mut filename = None;
    for param in line.split(';').skip(1) {
        if let Some((key, value)) = param.trim().split_once('=') {
            let value = value.trim_matches('"').to_owned();
            match key.trim() {
                "name" => name = Some(value),
                "filename" => filename = Some(value),
                _ => {}
            }
        }
    }
    Ok((name.ok_or("a part has no name")?, filename))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
