//! `ingest` function: not implemented yet; answers 501 so the workspace builds and deploys.

use lambda_http::{run, service_fn, Body, Error, Request, Response};

async fn function_handler(_event: Request) -> Result<Response<Body>, Error> {
    Ok(Response::builder()
        .status(501)
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"error":{"code":"not_implemented","message":"not implemented yet"}}"#,
        ))?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    run(service_fn(function_handler)).await
}
