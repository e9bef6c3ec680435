//! Prepares a local AWS stand-in (moto server) for `infra/run.sh --aws`: creates the
//! conversation and audit tables with the store's own `create_tables` and the limits table
//! with `create_limits_table` (so their schemas cannot drift from the code) and the
//! knowledge-base bucket, then uploads the knowledge base and its prebuilt index unless a
//! knowledge base is there.
//!
//! Reads the same environment as the functions: `AWS_ENDPOINT_URL` (+ dummy credentials),
//! `CONVERSATIONS_TABLE`, `AUDIT_TABLE`, `LIMITS_TABLE` (optional),
//! `KB_SOURCE=s3://bucket/key`.
//! Usage: `cargo run -p shared --example local_aws -- knowledge_base.json`

use shared::kb::{WriteCondition, Written};
use shared::{Config, KbLocation, KbSource, KnowledgeBase, S3KbSource, SearchIndex};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let file = std::env::args()
        .nth(1)
        .ok_or("usage: local_aws <knowledge_base.json>")?;
    let config = Config::from_env()?;
    let sdk = shared::config::sdk_config_from_env().await;
    if sdk.endpoint_url().is_none() {
        // This seeds a throwaway emulator; never let it touch a real account.
        return Err("AWS_ENDPOINT_URL is not set: refusing to run against real AWS".into());
    }

    let (Some(conversations), Some(audit)) = (&config.conversations_table, &config.audit_table)
    else {
        return Err("CONVERSATIONS_TABLE and AUDIT_TABLE must be set".into());
    };
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    shared::store::create_tables(&dynamo, conversations, audit).await?;
    println!("tables {conversations}, {audit} ready");
    if let Some(limits) = &config.limits_table {
        shared::limits::create_limits_table(&dynamo, limits).await?;
        println!("table {limits} ready");
    }

    let KbLocation::S3 { bucket, key } = &config.kb_source else {
        return Err("KB_SOURCE must be s3://bucket/key".into());
    };
    let s3 = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk)
            .force_path_style(true)
            .build(),
    );
    match s3.create_bucket().bucket(bucket).send().await {
        Ok(_) => {}
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_bucket_already_owned_by_you()) => {}
        Err(e) => return Err(e.into()),
    }
    let bytes = std::fs::read(&file)?;
    // Checked and indexed before anything is written, as ingest does.
    let kb = KnowledgeBase::from_json_str(&String::from_utf8_lossy(&bytes), &file)?;
    let hash = shared::index::content_hash(&bytes);
    let source = S3KbSource::from_sdk_config(&sdk, bucket, key);
    match source.put(bytes, WriteCondition::IfAbsent).await? {
        Written::Stored { etag } => {
            println!("uploaded {file} to {}", source.location());
            // The prebuilt index beside it, naming the ETag S3 gave the JSON, as ingest and
            // `rag sync` leave it: a cold start then loads the index, not the JSON.
            let index = shared::index::encode(&SearchIndex::new(kb, String::new()), hash, &etag);
            source.put_index(index).await?;
            println!("wrote its prebuilt index");
        }
        Written::PreconditionFailed => println!("{} already exists: kept", source.location()),
    }
    Ok(())
}
