//! The accept loop the hand-written test servers share (the fake model, the fake Bedrock):
//! a fresh port of 127.0.0.1, each connection handled on a task of its own, so a stalled
//! answer never holds up the next client.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Binds a free port of 127.0.0.1 and hands every connection accepted there, with `state`,
/// to `handle` on a task of its own. Returns the address and the accept loop's task (abort
/// it to stop accepting).
///
/// # Panics
/// If no local port can be bound (a broken test machine).
pub(crate) async fn serve_local<S, H, F>(state: Arc<S>, handle: H) -> (SocketAddr, JoinHandle<()>)
where
    S: Send + Sync + 'static,
    H: Fn(TcpStream, Arc<S>) -> F + Send + Sync + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address of the server");
    let task = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(handle(socket, state.clone()));
        }
    });
    (addr, task)
}
