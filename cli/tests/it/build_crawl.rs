//! `rag build --url`: crawling a live site. A small static server on 127.0.0.1 serves the
//! Hugo fixture with ETag/Last-Modified validators and a robots.txt, and counts what it
//! answers, so the tests see what the crawler asked for.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use crate::common::Scratch;
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
    if let Some((status, head, body)) = hostile(&path) {
        log.lock().unwrap().push((path, status));
        let head = format!(
            "HTTP/1.1 {status} X\r\n{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes()).await;
        let _ = stream.write_all(&body).await;
        return;
    }
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
                // Pages a test adds, one path a line.
                let extra: String = std::fs::read_to_string(root.join("extra-urls"))
                    .unwrap_or_default()
                    .lines()
                    .map(|p| format!("<url><loc>{base}{p}</loc></url>"))
                    .collect();
                xml.replace(
                    "</urlset>",
                    &format!(
                        "{extra}<url><loc>https://elsewhere.example.com/x/</loc></url></urlset>"
                    ),
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

/// Answers that no well-behaved page gives: a redirect off the site, a redirect loop, a
/// body over the crawler's 5 MiB.
fn hostile(path: &str) -> Option<(u16, String, Vec<u8>)> {
    let redirect = |to: &str| Some((302, format!("Location: {to}\r\n"), Vec::new()));
    match path {
        "/hostile/offsite/" => redirect("https://elsewhere.example.com/"),
        "/hostile/loop/" => redirect("/hostile/loop/"),
        "/hostile/huge/" => {
            let mut body = b"<html><body><main><p>".to_vec();
            body.resize(6 << 20, b'a');
            Some((200, "Content-Type: text/html\r\n".to_owned(), body))
        }
        _ => None,
    }
}

/// A copy of the Hugo fixture the test may edit.
fn site_copy(name: &str) -> Scratch {
    let dir = Scratch::new("rag-crawl", name);
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

#[test]
fn hostile_pages_cost_a_warning_each_and_the_crawl_goes_on() {
    let dir = site_copy("hostile");
    let site = dir.join("site");
    let (base, log) = serve(site.clone());
    let page = |dir: &str, html: String| {
        std::fs::create_dir_all(site.join(dir)).unwrap();
        std::fs::write(site.join(dir).join("index.html"), html).unwrap();
    };
    // 200,000 nested elements (2.2 MB): minutes in the HTML parser.
    page(
        "deep",
        format!(
            "<html><body><main>{}deep text{}</main></body></html>",
            "<div>".repeat(200_000),
            "</div>".repeat(200_000)
        ),
    );
    // A canonical URL off the site, and a page naming the home page as its own.
    page(
        "canon",
        r#"<html><head><link rel="canonical" href="https://evil.example/phish"></head>
        <body><main><h1>Canon</h1><p>Canonical elsewhere.</p></main></body></html>"#
            .to_owned(),
    );
    page(
        "claim",
        format!(
            r#"<html><head><link rel="canonical" href="{base}/"></head>
            <body><main><h1>Impostor</h1><p>I am the home page now.</p></main></body></html>"#
        ),
    );
    std::fs::write(
        site.join("extra-urls"),
        "/hostile/offsite/\n/hostile/loop/\n/hostile/huge/\n/deep/\n/canon/\n/claim/\n",
    )
    .unwrap();

    let out = crawl(&dir, &base, &[]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (path, why) in [
        ("/hostile/offsite/", ""),
        ("/hostile/loop/", ""),
        ("/hostile/huge/", "5 MiB"),
        ("/deep/", "nested more than 512"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("{base}{path}")))
            .unwrap_or_else(|| panic!("no warning for {path}:\n{stderr}"));
        assert!(line.starts_with("warning:") && line.contains(why), "{line}");
    }
    let docs = kb(&dir)["documents"].as_array().unwrap().clone();
    let url_of = |title: &str| {
        docs.iter()
            .find(|d| d["title"] == title)
            .map(|d| d["url"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        url_of("Canon").as_deref(),
        Some(format!("{base}/canon/").as_str())
    );
    assert!(stderr.contains("https://evil.example/phish"), "{stderr}");
    // The home page keeps its URL; the impostor is left out, both named.
    assert_eq!(url_of("Impostor"), None);
    let home = docs.iter().find(|d| d["id"] == "page_home").unwrap();
    assert_ne!(home["title"], "Impostor");
    let claim = stderr
        .lines()
        .find(|l| l.contains("both name"))
        .unwrap_or_else(|| panic!("no claim warning:\n{stderr}"));
    assert!(
        claim.contains(&format!("{base}/claim/")) && claim.contains(&format!("kept {base}/")),
        "{claim}"
    );
    // Every other page is there (the one-post section list is left out as a link list,
    // as in any build of this site).
    assert!(
        docs.iter().any(|d| d["id"] == "page_posts_first_post"),
        "page_posts_first_post missing"
    );
    assert!(pages_answered(&log, 200).contains(&"/hostile/huge/".to_owned()));
}

#[test]
fn a_sitemap_index_fanning_out_is_read_only_up_to_max_pages() {
    let dir = site_copy("fanout");
    let site = dir.join("site");
    let (base, log) = serve(site.clone());
    // An index of 20 sitemaps of 20,000 URLs each (about 1.2 MB apiece).
    let maps: String = (0..20)
        .map(|i| format!("<sitemap><loc>{base}/maps/{i}.xml</loc></sitemap>"))
        .collect();
    std::fs::write(
        site.join("index.xml"),
        format!("<sitemapindex>{maps}</sitemapindex>"),
    )
    .unwrap();
    std::fs::create_dir_all(site.join("maps")).unwrap();
    for i in 0..20 {
        let urls: String = (0..20_000)
            .map(|j| format!("<url><loc>https://other.example/{i}/{j}</loc></url><url><loc>{base}/p/{i}/{j}/</loc></url>"))
            .collect();
        std::fs::write(
            site.join(format!("maps/{i}.xml")),
            format!("<urlset>{urls}</urlset>"),
        )
        .unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_rag"))
        .current_dir(&dir)
        .args([
            "build",
            "--url",
            &format!("{base}/index.xml"),
            "--delay-ms",
            "0",
            "--max-pages",
            "5",
            "-o",
            "out/kb.json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The pages 404: none is kept, which is an error, but the point is what was read.
    let read: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| p.starts_with("/maps/"))
        .collect();
    assert_eq!(read, ["/maps/0.xml"], "{stderr}");
    assert!(stderr.contains("max_pages"), "{stderr}");
    // Off-host URLs are one warning, not one each.
    assert!(stderr.lines().count() < 20, "{stderr}");
}
