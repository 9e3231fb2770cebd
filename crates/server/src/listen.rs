//! Accepting HTTP connections within bounds that hold before any request is read: at most
//! `max_connections` open at once (further clients wait in the kernel's backlog until one
//! closes), and a connection that does not finish sending a request's headers within
//! `header_timeout` — a half-open or trickling client, or an idle keep-alive connection — is
//! closed. Both apply before the token is checked, since checking it needs the headers.
//!
//! axum's own `serve` runs hyper without a timer, so hyper's header-read timeout never fires
//! there; this loop gives it one. Each request carries its peer's address (`ConnectInfo`), which
//! the guard uses to slow down failed logins per client, and its connection's [`ConnectionTrust`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

/// How long to pause accepting after the system refused (out of file descriptors, say).
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(200);

/// The bounds on connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// How long a client may take to send a request's headers (and an idle connection may wait
    /// for its next request).
    pub header_timeout: Duration,
    /// The most connections open at once.
    pub max_connections: usize,
}

/// Whether a request on this connection has presented the right token: the guard then checks
/// the connection's later requests even while its address is held back for guessing
/// ([`crate::backoff`]), since whoever holds the connection is not guessing. Shared by the
/// requests of one connection only.
#[derive(Clone, Debug, Default)]
pub(crate) struct ConnectionTrust(Arc<AtomicBool>);

impl ConnectionTrust {
    /// Whether the connection has authenticated (and presented no wrong token since).
    pub(crate) fn trusted(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Records the outcome of a token check on this connection.
    pub(crate) fn set(&self, trusted: bool) {
        self.0.store(trusted, Ordering::Relaxed);
    }
}

/// The router, with the peer's address and the connection's trust added to each request.
#[derive(Clone)]
struct WithPeer {
    router: Router,
    peer: SocketAddr,
    trust: ConnectionTrust,
}

impl Service<hyper::Request<Incoming>> for WithPeer {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = <Router as Service<axum::extract::Request>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Service::<axum::extract::Request>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, request: hyper::Request<Incoming>) -> Self::Future {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(self.peer));
        request.extensions_mut().insert(self.trust.clone());
        self.router.call(request)
    }
}

/// Errors of one connection that do not concern the listener (the peer went away).
fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Serves `app` on `listener` until `stopping` is cancelled, then lets each connection finish
/// its request in flight (the caller bounds how long that may take).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stopping: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Finished connections are reaped as we go, so the set holds only open ones.
        while connections.try_join_next().is_some() {}
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = stopping.cancelled() => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    tracing::warn!("cannot accept a connection: {error}; pausing briefly");
                    tokio::select! {
                        () = tokio::time::sleep(ACCEPT_ERROR_PAUSE) => continue,
                        () = stopping.cancelled() => break,
                    }
                }
            },
            () = stopping.cancelled() => break,
        };
        // Answers are small and sent in a few writes; without TCP_NODELAY, Nagle's algorithm and
        // the client's delayed ACK add ~40 ms to each keep-alive request.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {error}");
        }
        let service = TowerToHyperService::new(WithPeer {
            router: app.clone(),
            peer,
            trust: ConnectionTrust::default(),
        });
        let stopping = stopping.clone();
        connections.spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
            let connection = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::trace!("connection from {peer} ended: {error}");
                    }
                }
                () = stopping.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.as_mut().await;
                }
            }
        });
    }
    while connections.join_next().await.is_some() {}
}
