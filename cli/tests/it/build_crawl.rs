//! `rag build --url`: crawling a live site. A small static server on 127.0.0.1 serves the
//! Hugo fixture with ETag/Last-Modified validators and a robots.txt, and counts what it
//! answers, so the tests see what the crawler asked for.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use shared::testing::http1::read_request;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// What the server answered: (path, status), in order.
type Log = Arc<Mutex<Vec<(String, u16)>>>;

const ROBOTS: &str = "User-agent: *\nDisallow: /about/\n";

/// Serves `root` on a free port, on a thread of its own (the tests run `rag` as a process
/// and wait on it); returns the base URL and the request log.
fn serve(root: PathBuf) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::default();
    let (log2, base2) = (log.clone(), base.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((stream, _)) = listener.accept().await {
                let (root, log, base) = (root.clone(), log2.clone(), base2.clone());
                tokio::spawn(async move { answer(stream, &root, &log, &base).await });
            }
        });
    });
    (base, log)
}

async fn answer(mut stream: TcpStream, root: &Path, log: &Log, base: &str) {
    let Ok(Some(request)) = read_request(&mut stream).await else {
        return;
    };
    let path = request.target().to_owned();
    let if_none_match = request.header("if-none-match").map(str::to_owned);
    let body: Option<Vec<u8>> = if path == "/robots.txt" {
        Some(ROBOTS.as_bytes().to_vec())
    } else {
        let rel = path.trim_start_matches('/');
        let file = if rel.is_empty() || rel.ends_with('/') {
            root.join(rel).join("index.html")
        } else {
            root.join(rel)
        };
        std::fs::read(file).ok().map(|b| {
            if path == "/sitemap.xml" {
                // The fixture's sitemap names the public host; this server is the site.
                let xml = String::from_utf8(b)
                    .unwrap()
                    .replace("https://hugo.example.org", base);
                xml.replace(
                    "</urlset>",
                    "<url><loc>https://elsewhere.example.com/x/</loc></url></urlset>",
                )
                .into_bytes()
            } else {
                b
            }
        })
    };
    let (status, head, body) = match body {
        None => (404, String::new(), b"not found".to_vec()),
        Some(body) => {
            let etag = format!(
                "\"{:x}\"",
                body.iter()
                    .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(*b)))
            );
            let kind = if path.ends_with(".xml") || path.ends_with(".txt") {
                "text/plain"
            } else {
                "text/html; charset=utf-8"
            };
            let head = format!("ETag: {etag}\r\nLast-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Type: {kind}\r\n");
            if if_none_match.as_deref() == Some(etag.as_str()) {
                (304, head, Vec::new())
            } else {
                (200, head, body)
            }
        }
    };
    log.lock().unwrap().push((path, status));
    let reason = match status {
        200 => "OK",
        304 => "Not Modified",
        _ => "Not Found",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\n{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&body).await;
}

/// A copy of the Hugo fixture the test may edit.
fn site_copy(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rag-crawl-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sites/hugo"),
        &dir.join("site"),
    );
    std::fs::create_dir_all(dir.join("out")).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn crawl(dir: &Path, base: &str, extra: &[&str]) -> Output {
    let sitemap = format!("{base}/sitemap.xml");
    let mut args = vec![
        "build",
        "--url",
        &sitemap,
        "--delay-ms",
        "0",
        "--exclude",
        "/tags/**",
        "--exclude",
        "/categories/**",
        "-o",
        "out/kb.json",
    ];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_rag"))
        .current_dir(dir)
        .args(&args)
        .output()
        .unwrap()
}

fn ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Page requests (not robots.txt or the sitemap) answered with `status`.
fn pages_answered(log: &Log, status: u16) -> Vec<String> {
    let mut v: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, s)| *s == status && p != "/robots.txt" && p != "/sitemap.xml")
        .map(|(p, _)| p.clone())
        .collect();
    v.sort();
    v
}

fn kb(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("out/kb.json")).unwrap()).unwrap()
}

#[test]
fn a_crawl_honours_robots_stays_on_the_host_and_rerunning_fetches_nothing_unchanged() {
    let dir = site_copy("conditional");
    let (base, log) = serve(dir.join("site"));

    ok(&crawl(&dir, &base, &[]));
    assert_eq!(
        pages_answered(&log, 200),
        ["/", "/posts/", "/posts/first-post/"]
    );
    assert!(
        log.lock().unwrap().iter().all(|(p, _)| p != "/about/"),
        "robots.txt disallows /about/"
    );
    let first = std::fs::read(dir.join("out/kb.json")).unwrap();
    let mut ids: Vec<String> = kb(&dir)["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    // The off-host URL in the sitemap is not fetched; the posts list is a listing (one
    // link, nothing else), left out as generator noise.
    assert_eq!(ids, ["page_home", "page_posts_first_post"]);
    assert!(dir.join("out/.rag-cache.json").is_file());

    // Nothing changed: every page answers 304 and the output is byte-identical.
    log.lock().unwrap().clear();
    ok(&crawl(&dir, &base, &[]));
    assert_eq!(pages_answered(&log, 200), Vec::<String>::new());
    assert_eq!(
        pages_answered(&log, 304),
        ["/", "/posts/", "/posts/first-post/"]
    );
    assert_eq!(std::fs::read(dir.join("out/kb.json")).unwrap(), first);

    // One page changes: only it is downloaded again, and the new text is in the output.
    let post = dir.join("site/posts/first-post/index.html");
    let html = std::fs::read_to_string(&post).unwrap();
    std::fs::write(&post, html.replace("bounds how much", "limits how much")).unwrap();
    log.lock().unwrap().clear();
    ok(&crawl(&dir, &base, &[]));
    assert_eq!(pages_answered(&log, 200), ["/posts/first-post/"]);
    assert_eq!(pages_answered(&log, 304), ["/", "/posts/"]);
    let text = kb(&dir).to_string();
    assert!(text.contains("limits how much") && !text.contains("bounds how much"));
}

#[test]
fn a_crawl_stops_at_max_pages_and_refuses_other_schemes() {
    let dir = site_copy("max");
    let (base, log) = serve(dir.join("site"));
    let out = crawl(&dir, &base, &["--max-pages", "1"]);
    ok(&out);
    assert_eq!(pages_answered(&log, 200).len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_pages"));

    let out = Command::new(env!("CARGO_BIN_EXE_rag"))
        .current_dir(&dir)
        .args(["build", "--url", "file:///etc/passwd", "-o", "out/x.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("http(s)"));
}
