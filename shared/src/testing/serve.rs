//! What the hand-written test servers share (the fake model, the fake Bedrock): a fresh
//! port of 127.0.0.1, each connection handled on a task of its own, so a stalled answer
//! never holds up the next client, answered by a script and recorded.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What a scripted server keeps between connections: the answers to come (`B`), every
/// request it read (`R`) and how many clients left before their answer was complete.
#[derive(Debug)]
pub(crate) struct Script<B, R> {
    // std Mutexes: every critical section is a push or a clone, never across an `.await`.
    answers: Mutex<VecDeque<B>>,
    requests: Mutex<Vec<R>>,
    disconnects: AtomicUsize,
}

/// Locks a mutex even if a panicking test thread poisoned it (the data is still fine).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<B: Clone, R> Script<B, R> {
    /// The next answer: the script's first, or its last one again and again once only
    /// that is left (so one answer serves every retry); `empty()` for an empty script.
    pub(crate) fn next(&self, empty: impl FnOnce() -> B) -> B {
        let mut answers = lock(&self.answers);
        if answers.len() == 1 {
            return answers[0].clone();
        }
        answers.pop_front().unwrap_or_else(empty)
    }

    /// Keeps a request the server read, for the test to look at.
    pub(crate) fn record(&self, request: R) {
        lock(&self.requests).push(request);
    }
}

/// A running scripted server; stops accepting connections when dropped.
#[derive(Debug)]
pub(crate) struct ScriptedServer<B, R> {
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    script: Arc<Script<B, R>>,
    accept_task: JoinHandle<()>,
}

impl<B, R> ScriptedServer<B, R>
where
    B: Send + 'static,
    R: Clone + Send + 'static,
{
    /// Binds a free port of 127.0.0.1 and hands every connection accepted there, with
    /// the script, to `handle` on a task of its own; an error from `handle` is a client
    /// that went away before its answer was complete (a write fails only then).
    ///
    /// # Panics
    /// If no local port can be bound (a broken test machine).
    pub(crate) async fn start<H, F>(answers: Vec<B>, handle: H) -> Self
    where
        H: Fn(TcpStream, Arc<Script<B, R>>) -> F + Send + Sync + 'static,
        F: Future<Output = io::Result<()>> + Send + 'static,
    {
        let script = Arc::new(Script {
            answers: Mutex::new(answers.into()),
            requests: Mutex::new(Vec::new()),
            disconnects: AtomicUsize::new(0),
        });
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address of the server");
        let shared = script.clone();
        let handle = Arc::new(handle);
        let accept_task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (script, handle) = (shared.clone(), handle.clone());
                tokio::spawn(async move {
                    if handle(socket, script.clone()).await.is_err() {
                        script.disconnects.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        ScriptedServer {
            addr,
            script,
            accept_task,
        }
    }

    /// Every request read so far, in arrival order.
    pub(crate) fn requests(&self) -> Vec<R> {
        lock(&self.script.requests).clone()
    }

    /// How many times a client closed its connection before its answer was complete.
    pub(crate) fn disconnects(&self) -> usize {
        self.script.disconnects.load(Ordering::SeqCst)
    }

    /// Waits up to `timeout` for at least one early client disconnect; true if one came.
    pub(crate) async fn wait_for_disconnect(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.disconnects() == 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }
}

impl<B, R> Drop for ScriptedServer<B, R> {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

/// Holds the connection open until the client closes it, which counts as a disconnect
/// (the error returned).
pub(crate) async fn wait_for_close(socket: &mut TcpStream) -> io::Result<()> {
    let mut buf = [0u8; 1024];
    loop {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "client left",
                ))
            }
            Ok(_) => {}
        }
    }
}
