//! The [`KbSource`] deployments use: one S3 object, read and written conditionally.
//!
//! S3 gives what the trait promises: an ETag per version, `If-None-Match` on GET (a 304 costs
//! a round trip and no body), and `If-Match` / `If-None-Match: *` on PUT, which S3 checks
//! atomically, so of two writers holding the same ETag exactly one wins. The bucket should
//! have versioning on (the SAM template's job), so every replaced knowledge base can still
//! be restored.

use async_trait::async_trait;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::Client;

use super::source::{
    unquote_etag, Fetched, Head, IndexStream, KbObject, KbSource, KbSourceError, WriteCondition,
    Written,
};
use std::io::{BufReader, Seek, SeekFrom, Write};

/// S3 error codes meaning "too much, too fast, try later".
const THROTTLING_CODES: &[&str] = &[
    "SlowDown",
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
];

/// A knowledge base stored as one S3 object.
#[derive(Debug, Clone)]
pub struct S3KbSource {
    client: Client,
    bucket: String,
    key: String,
}

impl S3KbSource {
    /// A source on `s3://bucket/key` using `client` as configured.
    pub fn new(client: Client, bucket: impl Into<String>, key: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
            key: key.into(),
        }
    }

    /// A source with a client built from `sdk` (see [`crate::config::sdk_config_from_env`]).
    ///
    /// When `sdk` names an endpoint (moto, a local stack: `AWS_ENDPOINT_URL`), the client
    /// uses path-style addressing: local servers answer on one host name and cannot serve
    /// `bucket.host` virtual-host names.
    pub fn from_sdk_config(
        sdk: &aws_config::SdkConfig,
        bucket: impl Into<String>,
        key: impl Into<String>,
    ) -> Self {
        let config = aws_sdk_s3::config::Builder::from(sdk)
            .force_path_style(sdk.endpoint_url().is_some())
            .build();
        Self::new(Client::from_conf(config), bucket, key)
    }

    /// Maps a failed SDK call to a [`KbSourceError`], keeping the SDK error as the source.
    fn error<E>(&self, op: &str, err: SdkError<E, HttpResponse>) -> KbSourceError
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        sdk_error(self.location(), op, err)
    }

    /// The client it reads and writes with.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The bucket the object is in.
    pub(crate) fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The object's key in its bucket.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Maps a failed SDK call on `location` to a [`KbSourceError`], keeping the SDK error as
/// the source: timeouts, unreachable S3, 5xx and throttling are retryable
/// ([`KbSourceError::Unavailable`]), the rest are not.
pub(crate) fn sdk_error<E>(
    location: String,
    op: &str,
    err: SdkError<E, HttpResponse>,
) -> KbSourceError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let (retryable, message) = match &err {
        SdkError::TimeoutError(_) => (true, format!("{op}: timed out")),
        SdkError::DispatchFailure(_) => (true, format!("{op}: could not reach S3")),
        SdkError::ResponseError(_) => (true, format!("{op}: unreadable response")),
        SdkError::ServiceError(ctx) => {
            let code = ctx.err().code().unwrap_or("unknown");
            let status = ctx.raw().status();
            let retryable = status.is_server_error() || THROTTLING_CODES.contains(&code);
            let message = format!(
                "{op}: {code} (HTTP {}): {}",
                status.as_u16(),
                ctx.err().message().unwrap_or_default()
            );
            (retryable, message)
        }
        _ => (false, format!("{op}: {err}")),
    };
    let source: Option<super::source::BoxError> = Some(Box::new(err));
    if retryable {
        KbSourceError::Unavailable {
            location,
            message,
            source,
        }
    } else {
        KbSourceError::Other {
            location,
            message,
            source,
        }
    }
}

/// The HTTP status of a service's answer, when there was one.
pub(crate) fn status<E>(err: &SdkError<E, HttpResponse>) -> Option<u16> {
    err.raw_response().map(|r| r.status().as_u16())
}

impl S3KbSource {
    /// The index object's GET, with its location; `None` when there is none.
    async fn get_index_object(
        &self,
    ) -> Result<Option<(aws_sdk_s3::operation::get_object::GetObjectOutput, String)>, KbSourceError>
    {
        let key = super::source::index_name(&self.key);
        match self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(&key)
            .send()
            .await
        {
            Ok(out) => Ok(Some((out, format!("s3://{}/{key}", self.bucket)))),
            Err(err) if err.as_service_error().is_some_and(|e| e.is_no_such_key()) => Ok(None),
            Err(err) => Err(self.error("GetObject (index)", err)),
        }
    }
}

/// A new file in the temporary directory, already unlinked: it lives as long as the
/// handle, and nothing else can open it.
fn spool_file() -> std::io::Result<std::fs::File> {
    let name = hex::encode(crate::secret::random_bytes::<8>());
    let path = std::env::temp_dir().join(format!("rag-index-{name}.spool"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// A GET's body as it streams in, into one buffer of the announced length: collecting the
/// chunks first and then joining them held the object two or three times over at once.
async fn read_body(
    out: aws_sdk_s3::operation::get_object::GetObjectOutput,
    location: String,
) -> Result<Vec<u8>, KbSourceError> {
    // The announced length only sizes the first allocation; at most 1 GiB of it.
    let announced = out.content_length().unwrap_or(0).clamp(0, 1 << 30);
    let mut bytes = Vec::with_capacity(announced as usize);
    for_each_chunk(out, &location, |chunk| {
        bytes.extend_from_slice(chunk);
        Ok(())
    })
    .await?;
    Ok(bytes)
}

/// Hands each chunk of a GET's body to `sink` as it arrives; a body cut off is
/// `Unavailable` (worth retrying), a failing sink's error is returned as it is.
async fn for_each_chunk(
    out: aws_sdk_s3::operation::get_object::GetObjectOutput,
    location: &str,
    mut sink: impl FnMut(&[u8]) -> Result<(), KbSourceError>,
) -> Result<(), KbSourceError> {
    let mut body = out.body;
    loop {
        match body.try_next().await {
            Ok(Some(chunk)) => sink(&chunk)?,
            Ok(None) => return Ok(()),
            Err(e) => {
                return Err(KbSourceError::Unavailable {
                    location: location.to_owned(),
                    message: "GetObject: the body was cut off".to_owned(),
                    source: Some(Box::new(e)),
                })
            }
        }
    }
}

/// S3 wants the quotes back on an ETag in a condition header.
fn quoted(etag: &str) -> String {
    format!("\"{etag}\"")
}

#[async_trait]
impl KbSource for S3KbSource {
    fn location(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    async fn get(&self, if_none_match: Option<&str>) -> Result<Fetched, KbSourceError> {
        let result = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(&self.key)
            .set_if_none_match(if_none_match.map(quoted))
            .send()
            .await;
        let out = match result {
            Ok(out) => out,
            // 304 is how S3 says "still the version you hold"; the SDK reports every
            // non-2xx answer as an error.
            Err(err) if status(&err) == Some(304) => return Ok(Fetched::NotModified),
            Err(err) if err.as_service_error().is_some_and(|e| e.is_no_such_key()) => {
                return Err(KbSourceError::NotFound {
                    location: self.location(),
                })
            }
            Err(err) => return Err(self.error("GetObject", err)),
        };
        let etag = out.e_tag().map(|e| unquote_etag(e).to_owned());
        let bytes = read_body(out, self.location()).await?;
        // S3 always sends an ETag; without one, the content hash still changes exactly
        // when the bytes do, though the next conditional read will then never match.
        let etag = etag.unwrap_or_else(|| super::source::content_version(&bytes));
        Ok(Fetched::Object(KbObject { bytes, etag }))
    }

    async fn head(&self, if_none_match: Option<&str>) -> Result<Head, KbSourceError> {
        let result = self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(&self.key)
            .set_if_none_match(if_none_match.map(quoted))
            .send()
            .await;
        match result {
            Ok(out) => match out.e_tag() {
                Some(etag) => Ok(Head::Current(unquote_etag(etag).to_owned())),
                // Without an ETag there is nothing to compare: read the object instead.
                None => self.get(if_none_match).await.map(|f| match f {
                    Fetched::NotModified => Head::NotModified,
                    Fetched::Object(o) => Head::Object(o),
                }),
            },
            Err(err) if status(&err) == Some(304) => Ok(Head::NotModified),
            // A HEAD answer has no body, so a missing key is known by its status alone.
            Err(err) if status(&err) == Some(404) => Err(KbSourceError::NotFound {
                location: self.location(),
            }),
            Err(err) => Err(self.error("HeadObject", err)),
        }
    }

    async fn put(
        &self,
        bytes: Vec<u8>,
        condition: WriteCondition,
    ) -> Result<Written, KbSourceError> {
        let upload = self.upload_config(bytes.len());
        let mut req = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(&self.key)
            .content_type("application/json")
            .body(ByteStream::from(bytes));
        req = match &condition {
            WriteCondition::IfMatch(etag) => req.if_match(quoted(etag)),
            WriteCondition::IfAbsent => req.if_none_match("*"),
        };
        match req.customize().config_override(upload).send().await {
            Ok(out) => {
                let etag = out
                    .e_tag()
                    .map(|e| unquote_etag(e).to_owned())
                    .ok_or_else(|| KbSourceError::Other {
                        location: self.location(),
                        message: "PutObject: the answer carries no ETag".to_owned(),
                        source: None,
                    })?;
                Ok(Written::Stored { etag })
            }
            // 412: the condition failed. 409 (ConditionalRequestConflict): another
            // conditional write to the key was in flight and won. Either way someone else
            // wrote first. A 404 answers If-Match on a key that no longer exists.
            Err(err) if matches!(status(&err), Some(412 | 409)) => Ok(Written::PreconditionFailed),
            Err(err)
                if status(&err) == Some(404)
                    && matches!(condition, WriteCondition::IfMatch(_))
                    && err.code() == Some("NoSuchKey") =>
            {
                Ok(Written::PreconditionFailed)
            }
            Err(err) => Err(self.error("PutObject", err)),
        }
    }

    /// Streams the index into an unnamed temporary file and decodes from there, as a file
    /// source is read: held whole in memory, the index (1.8× the JSON) sat beside
    /// everything decoded from it, 89 MiB at 10k pages against 50 MiB from a file. A
    /// spool that cannot be written (a full `/tmp`) is an error, so the JSON is read
    /// instead.
    async fn open_index(&self) -> Result<Option<IndexStream>, KbSourceError> {
        let Some((out, location)) = self.get_index_object().await? else {
            return Ok(None);
        };
        let spool_error = |e: std::io::Error| KbSourceError::Other {
            location: location.clone(),
            message: format!("cannot spool the index: {e}"),
            source: Some(Box::new(e)),
        };
        let mut file = spool_file().map_err(spool_error)?;
        for_each_chunk(out, &location, |chunk| {
            file.write_all(chunk).map_err(spool_error)
        })
        .await?;
        let len = file.seek(SeekFrom::End(0)).map_err(spool_error)?;
        file.seek(SeekFrom::Start(0)).map_err(spool_error)?;
        Ok(Some(IndexStream {
            reader: Box::new(BufReader::with_capacity(1 << 16, file)),
            len,
        }))
    }

    async fn put_index(&self, bytes: Vec<u8>) -> Result<(), KbSourceError> {
        let upload = self.upload_config(bytes.len());
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(super::source::index_name(&self.key))
            .content_type("application/octet-stream")
            .body(ByteStream::from(bytes))
            .customize()
            .config_override(upload)
            .send()
            .await
            .map_err(|err| self.error("PutObject (index)", err))?;
        Ok(())
    }
}

/// The slowest upload rate an upload's timeouts allow for, in bytes per second.
///
/// Conservative for a function in the bucket's region (tens of MB/s) and for an owner's
/// home uplink seeding a bucket.
const UPLOAD_FLOOR_BYTES_PER_SEC: u64 = 4 << 20;

/// `base` (the client's timeouts), stretched for an upload of `len` bytes over up to
/// `attempts` attempts.
///
/// A PUT sends its body inside the attempt, so the 5 s per attempt functions use (sized
/// for small requests, [`crate::config::timeouts`]) would fail any upload of more than a
/// few tens of MB: a 50k-page knowledge base's index is 182 MB. Each attempt gets the time
/// the body takes at [`UPLOAD_FLOOR_BYTES_PER_SEC`] on top of its own, and the call that
/// once per attempt on top of its own. A GET is unaffected: its body streams after the call.
fn upload_timeouts(
    base: &aws_config::timeout::TimeoutConfig,
    attempts: u32,
    len: usize,
) -> aws_config::timeout::TimeoutConfig {
    let transfer = std::time::Duration::from_secs(
        u64::try_from(len).unwrap_or(u64::MAX) / UPLOAD_FLOOR_BYTES_PER_SEC,
    );
    let mut stretched = base.to_builder();
    if let Some(attempt) = base.operation_attempt_timeout() {
        stretched = stretched.operation_attempt_timeout(attempt.saturating_add(transfer));
    }
    if let Some(operation) = base.operation_timeout() {
        stretched = stretched
            .operation_timeout(operation.saturating_add(transfer.saturating_mul(attempts)));
    }
    stretched.build()
}

impl S3KbSource {
    /// The configuration override of an upload of `len` bytes: the client's timeouts,
    /// stretched by [`upload_timeouts`].
    fn upload_config(&self, len: usize) -> aws_sdk_s3::config::Builder {
        let config = self.client.config();
        let base = config
            .timeout_config()
            .cloned()
            .unwrap_or_else(aws_config::timeout::TimeoutConfig::disabled);
        let attempts = config
            .retry_config()
            .map_or(1, aws_config::retry::RetryConfig::max_attempts);
        aws_sdk_s3::config::Builder::default().timeout_config(upload_timeouts(&base, attempts, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uploads_timeouts_grow_with_its_size() {
        let base = crate::config::timeouts();
        let small = upload_timeouts(&base, 3, 1000);
        assert_eq!(
            small.operation_attempt_timeout(),
            base.operation_attempt_timeout()
        );
        assert_eq!(small.operation_timeout(), base.operation_timeout());
        assert_eq!(small.connect_timeout(), base.connect_timeout());
        // A 50k-page index: 182 MB at 4 MiB/s is 43 s of transfer per attempt.
        let index = upload_timeouts(&base, 3, 182_000_000);
        let attempt = index.operation_attempt_timeout().expect("attempt timeout");
        assert_eq!(attempt.as_secs(), 5 + 43);
        let operation = index.operation_timeout().expect("operation timeout");
        assert_eq!(operation.as_secs(), 15 + 3 * 43);
        assert_eq!(index.connect_timeout(), base.connect_timeout());
    }

    #[test]
    fn a_sources_uploads_stretch_its_own_clients_timeouts() {
        let sdk = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .timeout_config(
                aws_config::timeout::TimeoutConfig::builder()
                    .operation_attempt_timeout(std::time::Duration::from_secs(2))
                    .build(),
            )
            .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(2))
            .build();
        let s = S3KbSource::from_sdk_config(&sdk, "bucket", "kb.json");
        let upload = s.upload_config(40 << 20).build();
        let timeouts = upload.timeout_config().expect("timeouts set");
        // 40 MiB at 4 MiB/s: 10 s on top of the client's 2 s; no call timeout to stretch.
        assert_eq!(
            timeouts.operation_attempt_timeout(),
            Some(std::time::Duration::from_secs(12))
        );
        assert_eq!(timeouts.operation_timeout(), None);
    }

    #[test]
    fn locations_are_s3_urls_and_etags_are_quoted_for_s3() {
        let sdk = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        let s = S3KbSource::from_sdk_config(&sdk, "bucket", "kb/knowledge_base.json");
        assert_eq!(s.location(), "s3://bucket/kb/knowledge_base.json");
        assert_eq!(quoted("abc"), "\"abc\"");
    }

    #[test]
    fn a_spool_reads_back_what_was_written_and_leaves_no_file_behind() {
        use std::os::fd::AsRawFd;
        let mut file = spool_file().unwrap();
        file.write_all(b"prebuilt index bytes").unwrap();
        // Asked of this file alone (counting the temporary directory's files would race
        // with any other process spooling there): Linux names an unlinked file "(deleted)".
        let path = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).unwrap();
        assert!(
            path.to_string_lossy().ends_with(" (deleted)"),
            "the spool is unlinked while open: {path:?}"
        );
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut back = String::new();
        std::io::Read::read_to_string(&mut file, &mut back).unwrap();
        assert_eq!(back, "prebuilt index bytes");
    }
}
