//! Helpers of the `rag` command tests: the real ingest handler served over HTTP on a local
//! port by a minimal HTTP/1.1 adapter (requests read by `shared::testing::http1`), and
//! running the `rag` binary.
#![allow(dead_code)] // each test binary uses a different subset

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Output;
use std::sync::Arc;

use ingest::{function_handler, AppState};
use lambda_http::Body;
use shared::testing::http1::read_request;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// `printf %s secret | sha256sum`: the token the tests' functions accept is `secret`.
pub(crate) const TOKEN_SHA256: &str =
    "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

/// Runs after the handler has answered a request (given its method) and before the answer
/// is sent: the place to make a change "meanwhile", between a client's read and its write.
pub(crate) type Hook =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Serves the ingest handler over `state` on a free port until the test ends; returns
/// its URL.
pub(crate) async fn serve(state: Arc<AppState>, hook: Option<Hook>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let state = state.clone();
            let hook = hook.clone();
            tokio::spawn(async move { exchange(stream, &state, hook).await });
        }
    });
    format!("http://{addr}/")
}

/// Reads one request, hands it to the handler, writes the response, closes.
async fn exchange(mut stream: tokio::net::TcpStream, state: &AppState, hook: Option<Hook>) {
    let request = read_request(&mut stream)
        .await
        .unwrap()
        .expect("the client closed before its request was whole");
    let (method, target) = (request.method().to_owned(), request.target().to_owned());
    let mut builder = lambda_http::http::Request::builder()
        .method(method.as_str())
        .uri(target.as_str());
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let body = request.body;
    // A function URL hands the handler its query parameters already parsed.
    let query: std::collections::HashMap<String, Vec<String>> = target
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .fold(Default::default(), |mut map, (k, v)| {
            map.entry(decode(k)).or_default().push(decode(v));
            map
        });
    let request = lambda_http::RequestExt::with_query_string_parameters(
        builder.body(Body::from(body)).unwrap(),
        query,
    );
    let response = function_handler(state, request).await.unwrap();
    if let Some(hook) = hook {
        hook(method).await;
    }
    let mut head = format!("HTTP/1.1 {}\r\nconnection: close\r\n", response.status());
    for (name, value) in response.headers() {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
    }
    let body = response.body().as_ref().to_vec();
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    stream.shutdown().await.unwrap();
}

/// Percent-decodes a query component (`+` is a space, as in forms).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

// The unit tests' scratch folders, shared by source: one guard for both kinds of test.
#[path = "../../src/scratch.rs"]
mod scratch;
pub(crate) use scratch::Scratch;

/// Writes `text` to a file named `name` in a scratch folder of its own; the folder goes
/// when the returned guard does (see [`Scratch`]).
pub(crate) fn kb_file(name: &str, text: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new("rag-cli-kb", name);
    let path = dir.file(name, text);
    (dir, path)
}

/// Runs `rag` with `RAG_TEST_TOKEN` set to `token` (unless `None`).
pub(crate) async fn rag(args: Vec<String>, token: Option<&str>) -> Output {
    let token = token.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rag"));
        cmd.args(&args).env_remove("RAG_TEST_TOKEN");
        if let Some(t) = token {
            cmd.env("RAG_TEST_TOKEN", t);
        }
        cmd.output().unwrap()
    })
    .await
    .unwrap()
}

/// `rag COMMAND --url URL --token-env RAG_TEST_TOKEN EXTRA... PATH`.
pub(crate) fn args(
    command: &str,
    url: &str,
    path: &std::path::Path,
    extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = [command, "--url", url, "--token-env", "RAG_TEST_TOKEN"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(path.display().to_string());
    args
}

/// The process's stdout and stderr as text.
pub(crate) fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
