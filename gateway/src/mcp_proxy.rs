//! `terrace mcp --stdio` with `TERRACE_URL`: the tools of a running Terrace, over HTTP, for a
//! host that starts MCP servers as local commands (Claude Desktop, Cursor, VS Code). The common
//! case: the agent on a laptop, Terrace elsewhere (or in another directory of the same machine).
//!
//! Each JSON-RPC message read from standard input is POSTed to `TERRACE_URL/mcp` with the API key
//! as the bearer token, and the answer (JSON, or the events of a stream) is written to standard
//! output, one message a line; notifications answered 202 write nothing. A refusal of the whole
//! HTTP request (401, 403, 5xx) becomes a JSON-RPC error naming the server and what it said, so
//! the host shows it. The key is checked once at start (`GET /v1/account`, free), so a wrong key
//! or URL fails at once with a message that names the server.

use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

/// The session state the server may set (a protocol version after `initialize`, a session id
/// if the server is stateful).
#[derive(Default)]
struct Session {
    protocol_version: Option<String>,
    session_id: Option<String>,
}

/// The MCP endpoint of a Terrace base URL (`http://host:8080` or `http://host:8080/mcp`).
pub fn endpoint(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/mcp") {
        base.to_string()
    } else {
        format!("{base}/mcp")
    }
}

/// Checks that `key` is a key of the Terrace at `base`; the error names the server.
pub async fn check_key(http: &reqwest::Client, base: &str, key: &str) -> anyhow::Result<()> {
    let root = endpoint(base);
    let root = root.trim_end_matches("/mcp");
    let resp = http
        .get(format!("{root}/v1/account"))
        .bearer_auth(key)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("cannot reach the Terrace at TERRACE_URL={base}: {e}"))?;
    let status = resp.status();
    if status.is_success() {
        return Ok(());
    }
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let said = body["error"]["message"]
        .as_str()
        .or_else(|| body["detail"].as_str())
        .unwrap_or("");
    if status.as_u16() == 401 {
        anyhow::bail!(
            "TERRACE_API_KEY is not a key of the Terrace at TERRACE_URL={base} (it answered 401: {said}); create one on that server's hub (/hub) or with `terrace accounts create` where it runs"
        );
    }
    anyhow::bail!("the Terrace at TERRACE_URL={base} answered {status}: {said}")
}

/// A JSON-RPC error answer to the request `id`.
fn rpc_error(id: &Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The messages of an HTTP answer: a JSON body (one message or a batch), or the `data:` events of
/// an event stream.
fn messages(content_type: &str, text: &str) -> Vec<Value> {
    let parsed: Vec<Value> = if content_type.starts_with("text/event-stream") {
        text.split("\n\n")
            .filter_map(|event| {
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                (!data.is_empty()).then(|| data.join("\n"))
            })
            .filter_map(|d| serde_json::from_str(&d).ok())
            .collect()
    } else {
        serde_json::from_str::<Value>(text).into_iter().collect()
    };
    parsed
        .into_iter()
        .flat_map(|v| match v {
            Value::Array(batch) => batch,
            other @ (Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Object(_)) => vec![other],
        })
        .collect()
}

/// Forwards one message; returns the messages to write back.
async fn forward(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    session: &Mutex<Session>,
    message: Value,
) -> Vec<Value> {
    let id = message.get("id").cloned();
    let is_initialize = message["method"] == "initialize";
    let mut req = http
        .post(url)
        .bearer_auth(key)
        .header("Accept", "application/json, text/event-stream")
        .json(&message);
    {
        let s = session.lock().await;
        if let Some(v) = &s.protocol_version {
            req = req.header("MCP-Protocol-Version", v.as_str());
        }
        if let Some(sid) = &s.session_id {
            req = req.header("Mcp-Session-Id", sid.as_str());
        }
    }
    let fail = |text: String| match &id {
        Some(id) => vec![rpc_error(id, -32603, text)],
        None => {
            tracing::warn!("{text}");
            Vec::new()
        }
    };
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot reach the Terrace at {url}: {e}")),
    };
    let status = resp.status();
    if let Some(sid) = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        session.lock().await.session_id = Some(sid.to_string());
    }
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let text = resp.text().await.unwrap_or_default();
    if status.as_u16() == 202 || (status.is_success() && text.trim().is_empty()) {
        return Vec::new();
    }
    if !status.is_success() {
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let said = body["error"]["message"]
            .as_str()
            .or_else(|| body["detail"].as_str())
            .or_else(|| body["error"].as_str())
            .unwrap_or(text.trim());
        let hint = if status.as_u16() == 401 {
            " (check TERRACE_API_KEY: it must be a key of this server)"
        } else {
            ""
        };
        return fail(format!(
            "the Terrace at {url} answered {status}: {said}{hint}"
        ));
    }
    let out = messages(&content_type, &text);
    if is_initialize
        && let Some(v) = out
            .iter()
            .find_map(|m| m["result"]["protocolVersion"].as_str())
    {
        session.lock().await.protocol_version = Some(v.to_string());
    }
    out
}

/// Serves standard input and output by forwarding to the Terrace at `base` with `key`.
pub async fn serve(base: &str, key: &str) -> anyhow::Result<()> {
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(120))
        .build()?;
    check_key(&http, base, key).await?;
    let url = Arc::new(endpoint(base));
    let key = Arc::new(key.to_string());
    let session = Arc::new(Mutex::new(Session::default()));
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(v) = rx.recv().await {
            let mut line = v.to_string();
            line.push('\n');
            if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let _ = tx.send(rpc_error(&Value::Null, -32700, format!("parse error: {e}")));
                continue;
            }
        };
        // initialize is answered before anything else is sent, so the protocol version it
        // settles is on every later request.
        if message["method"] == "initialize" {
            for m in forward(&http, &url, &key, &session, message).await {
                let _ = tx.send(m);
            }
            continue;
        }
        let (http, url, key, session, tx) = (
            http.clone(),
            url.clone(),
            key.clone(),
            session.clone(),
            tx.clone(),
        );
        tasks.spawn(async move {
            for m in forward(&http, &url, &key, &session, message).await {
                let _ = tx.send(m);
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    drop(tx);
    let _ = writer.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_and_stream_messages_are_read_as_a_client_would() {
        assert_eq!(endpoint("http://h:8080/"), "http://h:8080/mcp");
        assert_eq!(endpoint("http://h:8080/mcp"), "http://h:8080/mcp");
        let sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        assert_eq!(messages("text/event-stream", sse)[0]["id"], 1);
        assert_eq!(
            messages("application/json", "[{\"id\":1},{\"id\":2}]").len(),
            2
        );
    }
}
