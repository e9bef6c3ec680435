//! The [`StagingArea`] deployments use: a prefix in the knowledge base's own bucket,
//! uploaded to through presigned `PUT` URLs.
//!
//! The URL is signed with the ingest function's own credentials, so its role needs
//! `s3:PutObject` on the staging prefix (and `GetObject`/`DeleteObject` there to promote
//! and clean up), and nothing on any other key. A presigned URL cannot cap the size of what
//! is uploaded, so [`StagingArea::read`] checks the size before reading the body.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::Client;

use super::staging::{PresignedPut, StagedObject, StagingArea};
use crate::kb::s3::{sdk_error, status};
use crate::kb::KbSourceError;

/// Staged uploads under a prefix of one S3 bucket.
#[derive(Debug, Clone)]
pub struct S3StagingArea {
    client: Client,
    bucket: String,
    prefix: String,
}

impl S3StagingArea {
    /// An area under `s3://bucket/prefix` (see [`crate::S3KbSource::staging`] for one
    /// beside a knowledge base).
    pub fn new(client: Client, bucket: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
            prefix: prefix.into(),
        }
    }
}

// Written here rather than in `kb::s3` because staging belongs to ingest, which uses the
// knowledge base and not the other way round.
impl crate::kb::S3KbSource {
    /// A staging area for uploads too large for one request, under `prefix` in this
    /// source's bucket, using the same client (see [`S3StagingArea`]).
    pub fn staging(&self, prefix: impl Into<String>) -> S3StagingArea {
        S3StagingArea::new(self.client().clone(), self.bucket(), prefix)
    }
}

#[async_trait]
impl StagingArea for S3StagingArea {
    fn prefix(&self) -> &str {
        &self.prefix
    }

    fn location(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }

    async fn presign_put(
        &self,
        key: &str,
        expires_in: Duration,
    ) -> Result<PresignedPut, KbSourceError> {
        let config =
            PresigningConfig::expires_in(expires_in).map_err(|e| KbSourceError::Other {
                location: self.location(key),
                message: format!("cannot presign for {expires_in:?}"),
                source: Some(Box::new(e)),
            })?;
        let request = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type("application/json")
            .presigned(config)
            .await
            .map_err(|e| sdk_error(self.location(key), "PutObject (presign)", e))?;
        Ok(PresignedPut {
            url: request.uri().to_owned(),
            headers: request
                .headers()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect::<BTreeMap<_, _>>(),
        })
    }

    async fn read(&self, key: &str, max_bytes: usize) -> Result<StagedObject, KbSourceError> {
        let result = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await;
        let out = match result {
            Ok(out) => out,
            Err(err) if err.as_service_error().is_some_and(|e| e.is_no_such_key()) => {
                return Err(KbSourceError::NotFound {
                    location: self.location(key),
                })
            }
            Err(err) => return Err(sdk_error(self.location(key), "GetObject", err)),
        };
        // The length comes with the headers: an oversized object is refused without its
        // body ever being read (dropping the body closes the connection).
        let length = out.content_length().and_then(|n| u64::try_from(n).ok());
        if let Some(bytes) = length.filter(|&n| n > max_bytes as u64) {
            return Ok(StagedObject::TooLarge { bytes });
        }
        let bytes = out
            .body
            .collect()
            .await
            .map_err(|e| KbSourceError::Unavailable {
                location: self.location(key),
                message: "GetObject: the body was cut off".to_owned(),
                source: Some(Box::new(e)),
            })?
            .into_bytes()
            .to_vec();
        // Without a length header, the size is checked once the body is in.
        if bytes.len() > max_bytes {
            return Ok(StagedObject::TooLarge {
                bytes: bytes.len() as u64,
            });
        }
        Ok(StagedObject::Bytes(bytes))
    }

    async fn delete(&self, key: &str) -> Result<(), KbSourceError> {
        match self
            .client
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            // S3 answers 204 for a missing key; a 404 from a stand-in means the same.
            Err(err) if status(&err) == Some(404) => Ok(()),
            Err(err) => Err(sdk_error(self.location(key), "DeleteObject", err)),
        }
    }
}
