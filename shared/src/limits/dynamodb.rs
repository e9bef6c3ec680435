//! Counters in a DynamoDB table, shared by every instance.
//!
//! # Table
//! Partition key `counter_key` (S); attributes `n` (N, the count) and `expires_at` (N, epoch
//! seconds, the table's TTL attribute). On-demand billing. One item per client or session
//! per minute and one per UTC day for the token budget.
//!
//! A conditional `UpdateItem` (`ADD n :amount` if `n` is absent or at most
//! `limit - amount`) is atomic on DynamoDB, which is what makes the limits exact under
//! concurrency. Retries of throttled calls are the SDK's (see [`crate::config::sdk_config_from_env`]).

use aws_sdk_dynamodb::types::{AttributeValue, KeyType, ReturnValue};
use aws_sdk_dynamodb::Client;

use async_trait::async_trait;

use super::Counters;
use crate::store::dynamodb::{create_table, enable_ttl, sdk_error, wait_until_active};
use crate::store::StoreError;

/// The partition key's name.
const KEY: &str = "counter_key";

/// A [`Counters`] store on one DynamoDB table (see the module docs for its schema).
#[derive(Debug, Clone)]
pub struct DynamoCounters {
    client: Client,
    table: String,
}

impl DynamoCounters {
    /// Counters in `table`, which must have the module docs' schema (made by
    /// [`create_limits_table`] locally, by `template.yaml` when deployed).
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }
}

#[async_trait]
impl Counters for DynamoCounters {
    fn kind(&self) -> &'static str {
        "dynamodb"
    }

    fn is_shared(&self) -> bool {
        true
    }

    async fn try_add(
        &self,
        key: &str,
        amount: u64,
        limit: u64,
        expires_at: u64,
    ) -> Result<Option<u64>, StoreError> {
        // DynamoDB conditions cannot add, so "n + amount <= limit" is asked as
        // "n <= limit - amount".
        let Some(threshold) = limit.checked_sub(amount) else {
            return Ok(None);
        };
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(KEY, AttributeValue::S(key.to_owned()))
            .update_expression("ADD #n :amount SET #e = :expires")
            .condition_expression("attribute_not_exists(#n) OR #n <= :threshold")
            .expression_attribute_names("#n", "n")
            .expression_attribute_names("#e", "expires_at")
            .expression_attribute_values(":amount", number(amount))
            .expression_attribute_values(":threshold", number(threshold))
            .expression_attribute_values(":expires", number(expires_at))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        match result {
            Ok(out) => Ok(Some(
                out.attributes()
                    .and_then(|a| a.get("n"))
                    .map_or(Ok(amount), read_count)?,
            )),
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(None)
            }
            Err(err) => Err(sdk_error("UpdateItem counter", err)),
        }
    }

    async fn add(&self, key: &str, delta: i64, expires_at: u64) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.table)
            .key(KEY, AttributeValue::S(key.to_owned()))
            .update_expression("ADD #n :delta SET #e = :expires")
            .expression_attribute_names("#n", "n")
            .expression_attribute_names("#e", "expires_at")
            .expression_attribute_values(":delta", AttributeValue::N(delta.to_string()))
            .expression_attribute_values(":expires", number(expires_at))
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem counter", e))?;
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<u64, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(KEY, AttributeValue::S(key.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("GetItem counter", e))?;
        out.item()
            .and_then(|item| item.get("n"))
            .map_or(Ok(0), read_count)
    }
}

/// Creates the counters table (on-demand billing, TTL on `expires_at`) and waits until it
/// is active. Idempotent. Used by tests and the local-stack setup; deployed tables come from
/// the SAM template.
pub async fn create_limits_table(client: &Client, table: &str) -> Result<(), StoreError> {
    create_table(client, table, &[(KEY, KeyType::Hash)]).await?;
    wait_until_active(client, table).await?;
    enable_ttl(client, table).await
}

fn number(v: u64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// A stored count; refunds can leave a counter below 0 only through a bug, read as 0.
fn read_count(v: &AttributeValue) -> Result<u64, StoreError> {
    let text = v
        .as_n()
        .map_err(|_| StoreError::other("counter item whose n is not a number"))?;
    let value: i64 = text
        .parse()
        .map_err(|_| StoreError::other(format!("counter item with n = {text:?}")))?;
    Ok(value.max(0) as u64)
}
