//! The answer cache in the conversations table (see the parent module for the layout).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;

use super::{AnswerCache, CachedAnswer};
use crate::store::dynamodb::sdk_error;
use crate::store::{epoch_millis, StoreError};

/// The sort key of every cached answer.
const SORT_KEY: &str = "answer";

/// An [`AnswerCache`] shared by every instance, in the conversations table.
#[derive(Debug, Clone)]
pub struct DynamoAnswerCache {
    client: Client,
    table: String,
    ttl: Duration,
}

impl DynamoAnswerCache {
    /// A cache in `table` (the conversations table), each answer kept for `ttl`.
    pub fn new(client: Client, table: impl Into<String>, ttl: Duration) -> Self {
        Self {
            client,
            table: table.into(),
            ttl,
        }
    }

    fn key(key: &str) -> HashMap<String, AttributeValue> {
        HashMap::from([
            (
                "session_id".to_owned(),
                AttributeValue::S(format!("answer-cache#{key}")),
            ),
            ("turn".to_owned(), AttributeValue::S(SORT_KEY.to_owned())),
        ])
    }
}

fn now_secs() -> u64 {
    epoch_millis(SystemTime::now()) / 1000
}

#[async_trait]
impl AnswerCache for DynamoAnswerCache {
    async fn get(&self, key: &str) -> Result<Option<CachedAnswer>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(Self::key(key)))
            .send()
            .await
            .map_err(|e| sdk_error("GetItem answer cache", e))?;
        let Some(item) = out.item else {
            return Ok(None);
        };
        // DynamoDB deletes expired items some time after they expire: not found until then.
        let expired = match item.get("expires_at").map(AttributeValue::as_n) {
            Some(Ok(n)) => n.parse::<u64>().map_or(true, |at| at <= now_secs()),
            _ => true,
        };
        let answer = match item.get("answer").map(AttributeValue::as_s) {
            Some(Ok(json)) => serde_json::from_str::<CachedAnswer>(json).ok(),
            _ => None,
        };
        if answer.is_none() {
            tracing::warn!("unreadable answer cache item; treated as a miss");
        }
        Ok(answer.filter(|_| !expired))
    }

    async fn put(&self, key: &str, answer: &CachedAnswer) -> Result<(), StoreError> {
        let json = serde_json::to_string(answer).map_err(|e| StoreError::Other {
            message: format!("answer cache item: {e}"),
            source: Some(Box::new(e)),
        })?;
        let mut item = Self::key(key);
        item.insert("answer".to_owned(), AttributeValue::S(json));
        let expires = now_secs().saturating_add(self.ttl.as_secs());
        item.insert(
            "expires_at".to_owned(),
            AttributeValue::N(expires.to_string()),
        );
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            // The first answer stored stays (an expired one may be replaced): instances
            // answering the same question at once leave one answer, not a race.
            .condition_expression("attribute_not_exists(session_id) OR expires_at <= :now")
            .expression_attribute_values(":now", AttributeValue::N(now_secs().to_string()))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(sdk_error("PutItem answer cache", e)),
        }
    }
}
