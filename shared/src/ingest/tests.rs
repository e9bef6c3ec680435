use super::*;
use crate::kb::MemoryKbSource;
use crate::message::ChatMessage;
use crate::store::{Exchange, MemoryConversationStore, Recorded, StoreError};
use async_trait::async_trait;

const KB: &str = r#"{"documents": [
  {"id": "a", "type": "page", "title": "Alpha", "content": "apples"},
  {"id": "b", "type": "publication", "title": "Beta", "year": 2024}
], "glossary": {"苹果": "apple"}}"#;

struct Fixture {
    source: Arc<MemoryKbSource>,
    audit: Arc<MemoryConversationStore>,
    service: IngestService,
    caller: Caller,
}

fn fixture(stored: Option<&str>) -> Fixture {
    let source = Arc::new(stored.map_or_else(MemoryKbSource::new, MemoryKbSource::with_bytes));
    let audit = Arc::new(MemoryConversationStore::new());
    let service = IngestService::new(
        source.clone(),
        audit.clone(),
        Some(TokenHash::of_token("secret")),
    );
    let caller = service.authorize(Some("Bearer secret")).unwrap();
    Fixture {
        source,
        audit,
        service,
        caller,
    }
}

fn etag(f: &Fixture) -> String {
    f.source.object().unwrap().etag
}

fn if_match(etag: &str) -> Precondition {
    Precondition::IfMatch(vec![etag.to_owned()])
}

#[test]
fn preconditions_come_from_if_match_or_if_none_match() {
    let p = |m: Option<&str>, n: Option<&str>| Precondition::from_headers(m, n);
    assert_eq!(p(Some("\"e1\""), None).unwrap(), if_match("e1"));
    assert_eq!(
        p(Some("\"e1\", W/\"e2\""), None).unwrap(),
        Precondition::IfMatch(vec!["e1".into(), "e2".into()])
    );
    assert_eq!(p(Some("*"), None).unwrap(), Precondition::Any);
    assert_eq!(p(None, Some("*")).unwrap(), Precondition::IfAbsent);
    assert!(matches!(p(None, None), Err(Error::PreconditionRequired(_))));
    assert!(matches!(
        p(Some(" "), None),
        Err(Error::PreconditionRequired(_))
    ));
    for (m, n) in [
        (Some("e"), Some("*")),
        (None, Some("e1")),
        (Some(","), None),
    ] {
        assert!(
            matches!(p(m, n), Err(Error::InvalidInput(_))),
            "{m:?} {n:?}"
        );
    }
}

#[tokio::test]
async fn status_reports_etag_counts_and_summaries() {
    let f = fixture(Some(KB));
    let s = f.service.status().await.unwrap();
    assert_eq!(
        (s.etag.as_str(), s.version.as_str()),
        (etag(&f).as_str(), etag(&f).as_str())
    );
    assert!(s.valid);
    assert_eq!((s.documents, s.glossary_entries, s.bytes), (2, 1, KB.len()));
    assert_eq!(
        s.types,
        BTreeMap::from([("page".into(), 1), ("publication".into(), 1)])
    );
    assert_eq!(s.summaries[1].id, "b");
    let reformatted: Value = serde_json::from_str(KB).unwrap();
    assert_eq!(s.content_hash, Some(crate::kb::fingerprint(&reformatted)));
    let missing = fixture(None).service.status().await.unwrap_err();
    assert_eq!(crate::edge::ApiError::from(&missing).status, 404);
}

#[tokio::test]
async fn status_of_a_corrupt_or_invalid_stored_object_lists_its_problems() {
    let f = fixture(Some("{oops"));
    let s = f.service.status().await.unwrap();
    assert!(!s.valid);
    assert!(
        s.problems[0].message.contains("not valid JSON"),
        "{:?}",
        s.problems
    );
    f.source.replace(r#"[{"id": "a", "type": "page"}]"#);
    let s = f.service.status().await.unwrap();
    assert!(!s.valid);
    assert_eq!(s.documents, 1);
    assert_eq!(s.problems[0].path, "documents[0].title");
}

#[tokio::test]
async fn put_stores_the_body_verbatim_reports_the_diff_and_audits() {
    let f = fixture(Some(KB));
    let before = etag(&f);
    let body = r#"[{"id": "a", "type": "page", "title": "Alpha 2"}, {"id": "c", "type": "page", "title": "C"}]"#;
    let report = f
        .service
        .put(&f.caller, "req-1", body.as_bytes(), &if_match(&before))
        .await
        .unwrap();
    assert_eq!(f.source.object().unwrap().bytes, body.as_bytes());
    assert_eq!(report.etag, etag(&f));
    assert_eq!(report.previous_etag.as_deref(), Some(before.as_str()));
    assert_eq!(
        (
            report.diff.added.clone(),
            report.diff.changed.clone(),
            report.diff.removed.clone()
        ),
        (vec!["c".into()], vec!["a".into()], vec!["b".into()])
    );
    assert!(report.audited);
    let records = f.audit.audit_records();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        (r.action.as_str(), r.request_id.as_str()),
        ("ingest_put", "req-1")
    );
    assert_eq!(r.doc_ids, ["c", "a", "b"]);
    assert_eq!(r.client_hash.as_deref(), Some("token:2bb80d53"));
    assert_eq!(
        r.outcome,
        format!("ok etag={} added=1 changed=1 removed=1", report.etag)
    );
}

#[tokio::test]
async fn rejected_writes_change_nothing_and_are_not_audited() {
    let f = fixture(Some(KB));
    let before = etag(&f);
    let invalid = f
        .service
        .put(
            &f.caller,
            "r1",
            br#"{"documents": [{"id": "x", "type": "page"}, {"id": "x"}]}"#,
            &if_match(&before),
        )
        .await
        .unwrap_err();
    let Error::InvalidKb(problems) = &invalid else {
        panic!("{invalid}")
    };
    // Missing title, missing type, and the duplicate id.
    assert_eq!(problems.0.len(), 3, "{problems}");
    assert!(matches!(
        f.service
            .put(&f.caller, "r2", b"{not json", &if_match(&before))
            .await,
        Err(Error::InvalidKb(_))
    ));
    assert!(matches!(
        f.service
            .put(&f.caller, "r3", KB.as_bytes(), &if_match("stale"))
            .await,
        Err(Error::Conflict(_))
    ));
    assert!(matches!(
        f.service
            .put(&f.caller, "r4", KB.as_bytes(), &Precondition::IfAbsent)
            .await,
        Err(Error::Conflict(_))
    ));
    assert!(matches!(
        f.service
            .patch(
                &f.caller,
                "r5",
                br#"{"delete": ["zz"]}"#,
                &if_match(&before)
            )
            .await,
        Err(Error::InvalidKb(_))
    ));
    assert!(matches!(
        f.service
            .patch(&f.caller, "r6", br#"{"delete": ["a"]}"#, &Precondition::Any)
            .await,
        Err(Error::PreconditionRequired(_))
    ));
    assert_eq!(etag(&f), before);
    assert!(f.audit.audit_records().is_empty());
}

#[tokio::test]
async fn the_first_version_is_created_with_if_absent_and_any_replaces_the_current_one() {
    let f = fixture(None);
    assert!(matches!(
        f.service
            .put(&f.caller, "r0", KB.as_bytes(), &Precondition::Any)
            .await,
        Err(Error::Conflict(_))
    ));
    let created = f
        .service
        .put(&f.caller, "r1", KB.as_bytes(), &Precondition::IfAbsent)
        .await
        .unwrap();
    assert_eq!(created.previous_etag, None);
    assert_eq!(created.diff.added, ["a", "b"]);
    let replaced = f
        .service
        .put(
            &f.caller,
            "r2",
            br#"[{"id": "z", "type": "page", "title": "Z"}]"#,
            &Precondition::Any,
        )
        .await
        .unwrap();
    assert_eq!(
        replaced.previous_etag.as_deref(),
        Some(created.etag.as_str())
    );
}

#[tokio::test]
async fn patches_based_on_the_same_version_conflict_and_succeed_when_reapplied() {
    let f = fixture(Some(KB));
    let base = etag(&f);
    let first = f
        .service
        .patch(
            &f.caller,
            "p1",
            br#"{"upsert": [{"id": "c", "type": "page", "title": "C"}]}"#,
            &if_match(&base),
        )
        .await
        .unwrap();
    assert_eq!(first.diff.added, ["c"]);
    let second_body = br#"{"delete": ["b"]}"#;
    let lost = f
        .service
        .patch(&f.caller, "p2", second_body, &if_match(&base))
        .await
        .unwrap_err();
    assert!(lost.to_string().contains("GET it again"), "{lost}");
    let fresh = f.service.status().await.unwrap().etag;
    f.service
        .patch(&f.caller, "p3", second_body, &if_match(&fresh))
        .await
        .unwrap();
    let ids: Vec<String> = f
        .service
        .status()
        .await
        .unwrap()
        .summaries
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["a", "c"]);
    let actions: Vec<String> = f
        .audit
        .audit_records()
        .into_iter()
        .map(|r| r.request_id)
        .collect();
    assert_eq!(actions, ["p1", "p3"]);
    // Unknown fields and the glossary survive a patch.
    let stored: Value = serde_json::from_slice(&f.source.object().unwrap().bytes).unwrap();
    assert_eq!(stored["glossary"]["苹果"], "apple");
    assert_eq!(stored["documents"][0]["content"], "apples");
}

#[tokio::test]
async fn a_patch_on_a_corrupt_stored_object_asks_for_a_put() {
    let f = fixture(Some("{oops"));
    let err = f
        .service
        .patch(
            &f.caller,
            "p",
            br#"{"delete": ["a"]}"#,
            &if_match(&etag(&f)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains("PUT")),
        "{err}"
    );
}

/// A store whose audit writes always fail.
struct BrokenStore;

#[async_trait]
impl ConversationStore for BrokenStore {
    fn kind(&self) -> &'static str {
        "broken"
    }
    async fn recent_turns(&self, _: &str, _: usize) -> Result<Vec<ChatMessage>, StoreError> {
        Ok(Vec::new())
    }
    async fn record_exchange(&self, _: &Exchange) -> Result<Recorded, StoreError> {
        Err(StoreError::other("broken"))
    }
    async fn append_audit(&self, _: &AuditRecord) -> Result<(), StoreError> {
        Err(StoreError::other("broken"))
    }
}

#[tokio::test]
async fn a_failed_audit_does_not_undo_or_fail_the_write() {
    let source = Arc::new(MemoryKbSource::with_bytes(KB));
    let service = IngestService::new(
        source.clone(),
        Arc::new(BrokenStore),
        Some(TokenHash::of_token("t")),
    );
    let caller = service.authorize(Some("Bearer t")).unwrap();
    let base = source.object().unwrap().etag;
    let report = service
        .put(
            &caller,
            "r",
            br#"[{"id": "z", "type": "page", "title": "Z"}]"#,
            &if_match(&base),
        )
        .await
        .unwrap();
    assert!(!report.audited);
    assert_eq!(source.object().unwrap().etag, report.etag);
}

#[tokio::test]
async fn an_unavailable_source_is_a_retryable_error_not_a_conflict() {
    let f = fixture(Some(KB));
    let base = etag(&f);
    f.source.set_unavailable(true);
    let err = f
        .service
        .put(&f.caller, "r", KB.as_bytes(), &if_match(&base))
        .await
        .unwrap_err();
    assert_eq!(crate::edge::ApiError::from(&err).status, 503);
}
