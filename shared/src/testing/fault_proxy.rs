//! A fault-injecting proxy for the AWS APIs: a real HTTP/1.1 server on `127.0.0.1:0` that
//! forwards every request to an upstream (a [`MotoServer`]) unless a rule says to answer it
//! with a fault instead.
//!
//! Clients under test are pointed at the proxy exactly as at AWS (an SDK config whose
//! endpoint is [`FaultProxy::endpoint`]), so the SDK's own retries, timeouts and error
//! classification run for real. Rules match DynamoDB operations by their `X-Amz-Target`
//! header (or every request), fire for the next N matching requests or always, and the
//! proxy counts what it saw.
//!
//! HTTP is hand-written and minimal, like [`super::fake_llm`]: one request per connection,
//! request bodies by `content-length` (what the AWS JSON and REST APIs send), every answer
//! with `connection: close` so no connection is ever reused.
//!
//! ```no_run
//! # async fn demo() {
//! use shared::testing::fault_proxy::{Fault, FaultProxy, Match, Times};
//! use shared::testing::MotoServer;
//! let moto = MotoServer::shared();
//! let proxy = FaultProxy::start(&moto).await;
//! proxy.inject(Match::dynamodb("TransactWriteItems"), Fault::Throttle, Times::Next(4));
//! let client = proxy.dynamodb_client(&moto); // writes are throttled four times, then pass
//! # let _ = client;
//! # }
//! ```
//!
//! [`MotoServer`]: super::MotoServer

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::http1::{read_request, Request};
use super::MotoServer;

/// The DynamoDB JSON protocol's target prefix (`X-Amz-Target: DynamoDB_20120810.Query`).
pub const DYNAMODB_TARGET_PREFIX: &str = "DynamoDB_20120810.";

/// How long the upstream may take to answer a forwarded request before the proxy gives up
/// and drops the client's connection (moto answers in milliseconds).
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);

/// What a rule does to a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 400 with DynamoDB's `ThrottlingException` body, as a table over its rate
    /// answers. Not forwarded.
    Throttle,
    /// This status with a DynamoDB-style JSON error (`InternalServerError` for 500,
    /// `ServiceUnavailable` for 503, `InternalFailure` otherwise). Not forwarded.
    Status(u16),
    /// Closes the connection without an answer; the request is not forwarded.
    Drop,
    /// Forwards the request (so it takes effect upstream), then closes the connection
    /// without passing the answer on: a write that landed but whose response was lost.
    LoseResponse,
    /// Reads the request and never answers, holding the connection open: a black hole.
    Stall,
}

/// Which requests a rule applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// Requests whose `X-Amz-Target` header is exactly this.
    Target(String),
    /// Every request.
    Any,
}

impl Match {
    /// A DynamoDB operation by name: `Match::dynamodb("TransactWriteItems")`.
    pub fn dynamodb(operation: &str) -> Match {
        Match::Target(format!("{DYNAMODB_TARGET_PREFIX}{operation}"))
    }

    fn matches(&self, target: Option<&str>) -> bool {
        match self {
            Match::Any => true,
            Match::Target(t) => target == Some(t.as_str()),
        }
    }
}

/// How many matching requests a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// The next N matching requests; after them the rule is spent.
    Next(usize),
    /// Every matching request until [`FaultProxy::clear`].
    Always,
}

/// One request the proxy received, and what it did with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Its `X-Amz-Target` header, if any.
    pub target: Option<String>,
    /// The fault it was answered with; `None` when it was forwarded as is.
    pub fault: Option<Fault>,
}

#[derive(Debug)]
struct Rule {
    on: Match,
    fault: Fault,
    times: Times,
}

#[derive(Debug, Default)]
struct State {
    // std Mutexes: every critical section is a push, a scan or a clone, never across an
    // `.await`.
    rules: Mutex<Vec<Rule>>,
    seen: Mutex<Vec<Seen>>,
}

impl State {
    /// The fault for a request with this target (the first live rule that matches, which
    /// is then used up by one), recording the request either way.
    fn decide(&self, target: Option<&str>) -> Option<Fault> {
        let fault = {
            let mut rules = lock(&self.rules);
            let live = rules
                .iter_mut()
                .find(|r| r.on.matches(target) && !matches!(r.times, Times::Next(0)));
            live.map(|rule| {
                if let Times::Next(n) = &mut rule.times {
                    *n -= 1;
                }
                rule.fault
            })
        };
        lock(&self.seen).push(Seen {
            target: target.map(str::to_owned),
            fault,
        });
        fault
    }
}

/// Locks a mutex even if a panicking test thread poisoned it (the data is still fine).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running proxy; stops accepting connections when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<State>,
    accept_task: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy in front of `moto` with no rules (everything is forwarded).
    ///
    /// # Panics
    /// If no local port can be bound (a broken test machine).
    pub async fn start(moto: &MotoServer) -> FaultProxy {
        Self::start_for(upstream_addr(&moto.endpoint())).await
    }

    async fn start_for(upstream: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address of the proxy");
        let state = Arc::new(State::default());
        let accept_state = state.clone();
        let accept_task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let state = accept_state.clone();
                tokio::spawn(async move {
                    // An error here is a client that went away or an upstream that failed;
                    // either way the client's connection closes, which is all it can see.
                    let _ = serve(socket, &state, upstream).await;
                });
            }
        });
        FaultProxy {
            addr,
            state,
            accept_task,
        }
    }

    /// The proxy's base URL, `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds a rule: requests matching `on` get `fault`, `times` over. Rules are tried in the
    /// order they were added; the first live one wins.
    pub fn inject(&self, on: Match, fault: Fault, times: Times) {
        lock(&self.state.rules).push(Rule { on, fault, times });
    }

    /// Removes every rule: from now on everything is forwarded.
    pub fn clear(&self) {
        lock(&self.state.rules).clear();
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Seen> {
        lock(&self.state.seen).clone()
    }

    /// How many requests matching `on` arrived (faulted or forwarded).
    pub fn seen(&self, on: &Match) -> usize {
        lock(&self.state.seen)
            .iter()
            .filter(|s| on.matches(s.target.as_deref()))
            .count()
    }

    /// How many requests matching `on` were answered with a fault.
    pub fn faulted(&self, on: &Match) -> usize {
        lock(&self.state.seen)
            .iter()
            .filter(|s| s.fault.is_some() && on.matches(s.target.as_deref()))
            .count()
    }

    /// `moto`'s SDK configuration (credentials, region, retries, timeouts) with this proxy
    /// as the endpoint.
    pub fn sdk_config(&self, moto: &MotoServer) -> aws_config::SdkConfig {
        moto.sdk_config()
            .into_builder()
            .endpoint_url(self.endpoint())
            .build()
    }

    /// A DynamoDB client that goes through this proxy to `moto`.
    pub fn dynamodb_client(&self, moto: &MotoServer) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::new(&self.sdk_config(moto))
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

/// `127.0.0.1:<port>` of an `http://127.0.0.1:<port>` endpoint.
fn upstream_addr(endpoint: &str) -> SocketAddr {
    let host = endpoint.trim_start_matches("http://").trim_end_matches('/');
    host.parse()
        .unwrap_or_else(|e| panic!("upstream endpoint {endpoint:?} is not http://ip:port: {e}"))
}

/// Extends [`Request`] with what the proxy sends upstream.
trait Upstream {
    fn to_upstream(&self) -> Vec<u8>;
}

impl Upstream for Request {
    /// The bytes to send upstream: the same request on a connection that closes after it.
    fn to_upstream(&self) -> Vec<u8> {
        let mut out = format!("{}\r\n", self.line);
        for (name, value) in &self.headers {
            if !is_hop_by_hop(name) {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        out.push_str("connection: close\r\n\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// Headers about this one connection, which the proxy replaces with its own.
fn is_hop_by_hop(name: &str) -> bool {
    ["connection", "keep-alive", "proxy-connection"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// Serves one connection: one request, forwarded or faulted, then close.
async fn serve(mut client: TcpStream, state: &State, upstream: SocketAddr) -> io::Result<()> {
    client.set_nodelay(true)?;
    let request = match read_request(&mut client).await {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(()),
        // A request the proxy cannot pass on, told to the client.
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            let body = error_body("InternalFailure", &e.to_string());
            return answer(&mut client, 501, &body).await;
        }
        Err(e) => return Err(e),
    };
    match state.decide(request.header("x-amz-target")) {
        None => {
            let response = forward(upstream, &request).await?;
            client.write_all(&response).await?;
        }
        Some(Fault::Throttle) => {
            let body = error_body(
                "ThrottlingException",
                "Rate of requests exceeds the allowed throughput.",
            );
            answer(&mut client, 400, &body).await?;
        }
        Some(Fault::Status(code)) => {
            let name = match code {
                500 => "InternalServerError",
                503 => "ServiceUnavailable",
                _ => "InternalFailure",
            };
            answer(&mut client, code, &error_body(name, "injected fault")).await?;
        }
        Some(Fault::Drop) => {}
        Some(Fault::LoseResponse) => {
            forward(upstream, &request).await?;
        }
        Some(Fault::Stall) => {
            // Until the client gives up and closes: reads return 0 (or fail) then.
            let mut buf = [0u8; 1024];
            while matches!(client.read(&mut buf).await, Ok(n) if n > 0) {}
        }
    }
    // Errors are ignored: the client may already have closed.
    let _ = client.shutdown().await;
    Ok(())
}

/// Sends `request` upstream and returns the whole response, its head rewritten to close
/// the client's connection after it.
async fn forward(upstream: SocketAddr, request: &Request) -> io::Result<Vec<u8>> {
    let exchange = async {
        let mut socket = TcpStream::connect(upstream).await?;
        socket.write_all(&request.to_upstream()).await?;
        let mut response = Vec::new();
        socket.read_to_end(&mut response).await?;
        Ok::<_, io::Error>(response)
    };
    let response = tokio::time::timeout(UPSTREAM_TIMEOUT, exchange)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "upstream did not answer"))??;
    let Some(head_end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "upstream answer without a complete head",
        ));
    };
    let head = String::from_utf8_lossy(&response[..head_end]);
    let mut out = String::new();
    for (i, line) in head.split("\r\n").enumerate() {
        let hop = line
            .split_once(':')
            .is_some_and(|(name, _)| is_hop_by_hop(name.trim()));
        if i == 0 || !hop {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("connection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&response[head_end + 4..]);
    Ok(bytes)
}

/// A DynamoDB JSON error body, `__type` namespaced as DynamoDB sends it.
fn error_body(name: &str, message: &str) -> String {
    serde_json::json!({
        "__type": format!("com.amazonaws.dynamodb.v20120810#{name}"),
        "message": message,
    })
    .to_string()
}

/// Writes a complete JSON answer with `status`.
async fn answer(socket: &mut TcpStream, status: u16, body: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} Fault\r\ncontent-type: application/x-amz-json-1.0\r\n\
         x-amzn-requestid: fault-proxy\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_fire_in_order_for_their_count_then_pass_everything() {
        let state = State::default();
        let write = "DynamoDB_20120810.TransactWriteItems";
        let query = "DynamoDB_20120810.Query";
        lock(&state.rules).push(Rule {
            on: Match::dynamodb("TransactWriteItems"),
            fault: Fault::Throttle,
            times: Times::Next(2),
        });
        lock(&state.rules).push(Rule {
            on: Match::Any,
            fault: Fault::Drop,
            times: Times::Next(1),
        });
        assert_eq!(state.decide(Some(query)), Some(Fault::Drop));
        assert_eq!(state.decide(Some(write)), Some(Fault::Throttle));
        assert_eq!(state.decide(None), None);
        assert_eq!(state.decide(Some(write)), Some(Fault::Throttle));
        assert_eq!(state.decide(Some(write)), None);
        let seen = lock(&state.seen);
        assert_eq!(seen.len(), 5);
        assert_eq!(seen.iter().filter(|s| s.fault.is_some()).count(), 3);
    }

    #[test]
    fn hop_by_hop_headers_are_replaced_on_the_way_upstream() {
        let request = Request {
            line: "POST / HTTP/1.1".into(),
            headers: vec![
                ("Host".into(), "127.0.0.1:1".into()),
                ("Connection".into(), "keep-alive".into()),
                ("x-amz-target".into(), "DynamoDB_20120810.Query".into()),
            ],
            body: b"{}".to_vec(),
        };
        let sent = String::from_utf8(request.to_upstream()).unwrap();
        assert_eq!(
            sent,
            "POST / HTTP/1.1\r\nHost: 127.0.0.1:1\r\nx-amz-target: DynamoDB_20120810.Query\r\n\
             connection: close\r\n\r\n{}"
        );
    }
}
