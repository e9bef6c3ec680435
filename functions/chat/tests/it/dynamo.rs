//! A chat through the DynamoDB conversation store on a moto server: the turns and the audit
//! record land in the tables, and the next request of the session reads its history back.
//! Needs moto, like the store's own tests: run `infra/venv.sh` once to install it.
#![allow(clippy::unwrap_used)] // test helpers may panic on broken fixtures

use crate::common;

use aws_sdk_dynamodb::types::AttributeValue;
use common::*;
use serde_json::Value;
use shared::testing::moto::unique_name;
use shared::testing::MotoServer;
use shared::{ChatMessage, Role};

#[tokio::test]
async fn chat_turns_and_audit_land_in_dynamodb_and_history_reads_back() {
    let moto = MotoServer::shared();
    let (client, audit_table, store) = dynamo_store(&moto).await;
    let state = state_with(None, store.clone());

    let session = unique_name("s");
    let first = format!(
        r#"{{"message": "请介绍一下 Partial FC", "session_id": "{session}", "request_id": "r-1"}}"#
    );
    let (status, body, _) = call_json(&state, post(&first)).await;
    assert_eq!(status, 200, "{body}");
    let reply = body["reply"].as_str().unwrap().to_owned();
    let key = body["request_id"].as_str().unwrap().to_owned();
    assert!(key.starts_with("r-1."), "{key}");

    // The turn is in the conversations table, in order.
    assert_eq!(
        store
            .recent_turns(&sid(&state, &session), 10)
            .await
            .unwrap(),
        vec![
            ChatMessage::new(Role::User, "请介绍一下 Partial FC"),
            ChatMessage::new(Role::Assistant, reply),
        ]
    );
    // The audit record is in the audit table, with the retrieved documents.
    let audit = client
        .get_item()
        .table_name(&audit_table)
        .key("request_id", AttributeValue::S(key.clone()))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    let item = audit.item().expect("audit item");
    assert_eq!(item["outcome"].as_s().unwrap(), "offline");
    assert_eq!(item["session_id"].as_s().unwrap(), &sid(&state, &session));
    let doc_ids: Vec<&str> = item["doc_ids"]
        .as_l()
        .unwrap()
        .iter()
        .map(|v| v.as_s().unwrap().as_str())
        .collect();
    assert!(doc_ids.contains(&"pub_partial_fc_iccvw"), "{doc_ids:?}");

    // A follow-up in the same session gets its history from DynamoDB.
    let second = format!(
        r#"{{"message": "它的代码在哪里？", "session_id": "{session}", "request_id": "r-2"}}"#
    );
    let (status, body, _) = call_json(&state, post(&second)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["retrieval"]["followup"], Value::Bool(true));
    assert_eq!(
        store
            .recent_turns(&sid(&state, &session), 10)
            .await
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        call_json(&state, event("GET", None, &[])).await.1["store"],
        "dynamodb"
    );
}
