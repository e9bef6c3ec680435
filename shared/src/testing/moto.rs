//! A moto server (local AWS APIs) started by a test and stopped when it is dropped.
//!
//! Tests start what they need themselves, so a fresh CI machine needs nothing running: only
//! the `moto_server` executable, which `infra/venv.sh` installs into `<repo>/.venv`.
//!
//! A test binary's tests share one server ([`MotoServer::shared`]): starting one costs about
//! a second of CPU and 100 MB, and a crate's tests are one binary. Tests therefore name every
//! table and bucket with [`unique_name`] and never reset the server; a test that must stop
//! or reset its server starts its own ([`MotoServer::start`]).
//!
//! ```no_run
//! # async fn demo() {
//! use shared::testing::MotoServer;
//! let moto = MotoServer::shared(); // panics, saying what to run, when moto is missing
//! let client = moto.dynamodb_client();
//! let bucket = moto.create_bucket("kb").await;
//! # let _ = (client, bucket);
//! # }
//! ```

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::config::{Credentials, Region, SharedCredentialsProvider};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a starting server may take to answer (it usually takes under 2 s).
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `moto_server` child process, killed when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct MotoServer {
    /// Held for its drop: the last clone to go kills the process.
    _process: Arc<Process>,
    port: u16,
}

/// The child process and its log file, removed together.
#[derive(Debug)]
struct Process {
    /// Locked only to kill and reap it on drop.
    child: Mutex<Child>,
    log_path: PathBuf,
}

impl MotoServer {
    /// This test binary's one server, started by the first test that asks (see the module
    /// docs).
    ///
    /// It is never dropped: it ends with the test process, which holds its stdin (the
    /// wrapper `infra/moto_serial.py` exits when stdin closes).
    ///
    /// # Panics
    /// As [`MotoServer::start`].
    pub fn shared() -> MotoServer {
        static SHARED: OnceLock<MotoServer> = OnceLock::new();
        SHARED.get_or_init(MotoServer::start).clone()
    }

    /// Starts a server on a free 127.0.0.1 port and waits until it answers.
    ///
    /// The executable is `$MOTO_SERVER`, else `<workspace>/.venv/bin/moto_server`, else
    /// `moto_server` on `PATH`. A missing one is a set-up error, not a reason to pass: the
    /// test command (`infra/test.sh`) installs it.
    ///
    /// # Panics
    /// When no executable is found, or the server does not come up within 10 s.
    pub fn start() -> MotoServer {
        let Some(exe) = find_executable() else {
            panic!(
                "moto_server not found: run infra/venv.sh once (it installs moto into .venv), \
                 or infra/test.sh, or set MOTO_SERVER to its path"
            );
        };
        // Another process can take the probed port before moto binds it; moto then exits and
        // a new port is tried.
        let mut failures = Vec::new();
        for _ in 0..3 {
            match spawn(&exe) {
                Ok(server) => return server,
                Err(why) => failures.push(why),
            }
        }
        panic!(
            "moto_server ({}) did not start:\n{}",
            exe.display(),
            failures.join("\n")
        );
    }

    /// The server's base URL, `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An SDK configuration for this server: static dummy credentials, region `us-east-1`,
    /// the retries and timeouts of [`crate::config::sdk_config_from_env`]. Built explicitly, so
    /// nothing is read from (or written to) the environment. S3 clients built from it also
    /// need `force_path_style(true)`.
    pub fn sdk_config(&self) -> aws_config::SdkConfig {
        let credentials = Credentials::new("testing", "testing", None, None, "moto");
        aws_config::SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(self.endpoint())
            .region(Region::new("us-east-1"))
            .credentials_provider(SharedCredentialsProvider::new(credentials))
            .retry_config(crate::config::retry_config())
            .timeout_config(crate::config::timeouts())
            .build()
    }

    /// The environment a function process needs to reach this server through the SDK's
    /// default provider chain (`AWS_ENDPOINT_URL`, dummy keys, region, no instance
    /// metadata), for tests that start a function's binary.
    pub fn process_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
        ]
    }

    /// A DynamoDB client talking to this server.
    pub fn dynamodb_client(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::new(&self.sdk_config())
    }

    /// An S3 client talking to this server (path-style addressing, as moto needs).
    pub fn s3_client(&self) -> aws_sdk_s3::Client {
        let config = aws_sdk_s3::config::Builder::from(&self.sdk_config())
            .force_path_style(true)
            .build();
        aws_sdk_s3::Client::from_conf(config)
    }

    /// Creates a bucket with a unique name (see [`unique_name`]) and returns the name.
    ///
    /// # Panics
    /// When the server refuses: a test cannot go on without its bucket.
    pub async fn create_bucket(&self, prefix: &str) -> String {
        let bucket = unique_name(prefix);
        if let Err(e) = self
            .s3_client()
            .create_bucket()
            .bucket(&bucket)
            .send()
            .await
        {
            panic!("cannot create bucket {bucket}: {e:?}");
        }
        bucket
    }

    /// Writes an object straight to S3, around any code under test (as a console upload
    /// would).
    ///
    /// # Panics
    /// When the server refuses: the test's premise would be missing.
    pub async fn put_object(&self, bucket: &str, key: &str, body: impl AsRef<[u8]>) {
        if let Err(e) = self
            .s3_client()
            .put_object()
            .bucket(bucket)
            .key(key)
            .body(body.as_ref().to_vec().into())
            .send()
            .await
        {
            panic!("cannot write s3://{bucket}/{key}: {e:?}");
        }
    }

    /// The keys under `prefix` in `bucket` (up to S3's 1,000 a listing).
    ///
    /// # Panics
    /// When the bucket cannot be listed.
    pub async fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        match self
            .s3_client()
            .list_objects_v2()
            .bucket(bucket)
            .prefix(prefix)
            .send()
            .await
        {
            Ok(out) => out
                .contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_owned))
                .collect(),
            Err(e) => panic!("cannot list s3://{bucket}/{prefix}: {e:?}"),
        }
    }

    /// Reads an object straight from S3: its bytes and its ETag, unquoted.
    ///
    /// # Panics
    /// When the object cannot be read (naming it and why).
    pub async fn get_object(&self, bucket: &str, key: &str) -> (Vec<u8>, String) {
        let read = async {
            let out = self
                .s3_client()
                .get_object()
                .bucket(bucket)
                .key(key)
                .send()
                .await
                .map_err(|e| format!("{e:?}"))?;
            let etag = out.e_tag().ok_or("no ETag")?.trim_matches('"').to_owned();
            let bytes = out.body.collect().await.map_err(|e| format!("{e:?}"))?;
            Ok::<_, String>((bytes.into_bytes().to_vec(), etag))
        };
        read.await
            .unwrap_or_else(|e| panic!("cannot read s3://{bucket}/{key}: {e}"))
    }

    /// Drops every resource the server holds (`POST /moto-api/reset`).
    pub async fn reset(&self) -> std::io::Result<()> {
        let mut stream = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)).await?;
        stream
            .write_all(
                b"POST /moto-api/reset HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n",
            )
            .await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        let status_line = response.split(|&b| b == b'\r').next().unwrap_or_default();
        if status_line.ends_with(b" 200 OK") {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "moto reset answered {:?}",
                String::from_utf8_lossy(status_line)
            )))
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Errors are ignored: the process may already have exited, and a leftover log file in
        // the temp dir is harmless.
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_file(&self.log_path);
    }
}

/// A name unique across tests, test binaries and runs (for tables, buckets, sessions).
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{nanos:09}-{n}", std::process::id())
}

fn find_executable() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MOTO_SERVER") {
        // An explicit setting that points nowhere is a mistake to report, not a reason to
        // fall back to some other moto.
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "MOTO_SERVER={} is not a file",
            path.display()
        );
        return Some(path);
    }
    // CARGO_MANIFEST_DIR is this crate's folder, `<workspace>/shared`.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let venv = workspace.join(".venv/bin/moto_server");
    if venv.is_file() {
        return Some(venv);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("moto_server"))
        .find(|p| p.is_file())
}

fn spawn(exe: &Path) -> Result<MotoServer, String> {
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    // A file rather than a pipe: moto logs every request, and an unread pipe would fill up
    // and block it. The file also explains a failed start.
    let log_path = std::env::temp_dir().join(format!("{}.log", unique_name("moto_server")));
    let log = File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut command = serialised_command(exe);
    // stdin is a pipe held in `Child` (never written): the wrapper exits when it closes,
    // which is how a shared server, never dropped, ends with its test process.
    let child = command
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .env("MOTO_EXIT_ON_STDIN_EOF", "1")
        .stdin(Stdio::piped())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let process = Process {
        child: Mutex::new(child),
        log_path,
    };
    let deadline = Instant::now() + START_TIMEOUT;
    let alive = |process: &Process| -> Result<(), String> {
        let mut child = process.child.lock().unwrap_or_else(|e| e.into_inner());
        match child.try_wait() {
            Ok(Some(status)) => Err(format!(
                "exited with {status}: {}",
                log_tail(&process.log_path)
            )),
            Ok(None) => Ok(()),
            Err(e) => Err(format!("cannot poll the process: {e}")),
        }
    };
    loop {
        alive(&process)?;
        // Alive after answering: the answer was ours, not from another process that won
        // the port while ours was failing to bind it.
        if answers_http(port) && alive(&process).is_ok() {
            // Started: the log has said what a failed start needs. The server writes on
            // to the unlinked file, which goes with it; a test binary's shared server is
            // never dropped, so its log would otherwise stay behind in the temp dir.
            let _ = std::fs::remove_file(&process.log_path);
            return Ok(MotoServer {
                _process: Arc::new(process),
                port,
            });
        }
        if Instant::now() > deadline {
            return Err(format!(
                "no answer on port {port} within {START_TIMEOUT:?}: {}",
                log_tail(&process.log_path)
            ));
        }
        // Blocking is fine here: this runs once per test, before any async work.
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The command that starts moto: `infra/moto_serial.py` under the Python that runs `exe`
/// when both are there (a virtualenv's `bin/python` beside `bin/moto_server`), so that
/// concurrent conditional updates are atomic as on DynamoDB (see that file); else `exe`
/// itself.
fn serialised_command(exe: &Path) -> Command {
    let python = exe.with_file_name("python");
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/moto_serial.py");
    if python.is_file() && wrapper.is_file() {
        let mut command = Command::new(python);
        command.arg(wrapper);
        command
    } else {
        Command::new(exe)
    }
}

fn free_port() -> std::io::Result<u16> {
    // Bind port 0 and let the OS pick; the listener is closed before moto binds the port.
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// Whether something on the port speaks HTTP (moto answers `GET /` with S3's bucket list).
fn answers_http(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 8];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_differ() {
        assert_ne!(unique_name("t"), unique_name("t"));
        assert!(unique_name("conv").starts_with("conv-"));
    }
}
