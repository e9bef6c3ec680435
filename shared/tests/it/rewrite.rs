//! Model-assisted queries (`QUERY_REWRITE`) against the fake provider, a real HTTP server
//! on 127.0.0.1: a question in another language than the site's is expanded by one call
//! and the expansion's hits fused with its own, as is an English question whose words are
//! on many pages alike (a flat ranking); a failed or slow call, or `off`, leaves
//! the question's own ranking; the call's tokens count against the daily budget.

use std::sync::Arc;
use std::time::Duration;

use shared::chat::{ChatConfig, ChatResponse, QueryRewrite, RequestContext};
use shared::testing::fake_llm::PROMPT_TOKENS;
use shared::testing::{Behavior, FakeLlm};
use shared::{
    ChatRequest, ChatService, KnowledgeBase, LlmClient, MemoryConversationStore,
    OpenAiCompatClient, SearchIndex,
};

const TOP_K: usize = 3;
const MIN_SCORE: f32 = 0.5;
/// Asked of an English site; its words translate to none of `reflog`'s.
const QUESTION: &str = "怎么找回丢失的提交？";
const EXPANSION: &str = "query: recover a lost commit with reflog\n\
                         passage: Run git reflog to list where HEAD has been, then reset to the lost entry.";

/// A small English manual: the page that answers [`QUESTION`] (`reflog`) shares no word
/// with the lexicon's translations of it.
fn index() -> SearchIndex {
    index_of(vec![
        page("commit", "git-commit", "Record changes to the repository. A commit stores the current contents of the index with a message."),
        page("reflog", "git-reflog", "Manage reflog information. Reference logs record when the tips of branches and HEAD were updated."),
        page("log", "git-log", "Show commit logs. Lists commits reachable from the given ones, newest first."),
        page("stash", "git-stash", "Stash the changes in a dirty working directory away and restore them later."),
        page("lost", "Lost and found", "Files that were deleted are gone; submitted forms cannot be recovered here."),
    ])
}

/// A knowledge-base page entry.
fn page(id: &str, title: &str, content: &str) -> serde_json::Value {
    serde_json::json!({"id": id, "type": "page", "title": title, "content": content})
}

/// The index over `documents`, read as a knowledge base file is.
fn index_of(documents: Vec<serde_json::Value>) -> SearchIndex {
    let json = serde_json::json!({ "documents": documents });
    let kb = KnowledgeBase::from_json_str(&json.to_string(), "test").unwrap();
    SearchIndex::new(kb, "v1")
}

fn service(fake: &FakeLlm, mode: QueryRewrite, tune: impl FnOnce(&mut ChatConfig)) -> ChatService {
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiCompatClient::new(fake.config()).unwrap());
    let mut config = ChatConfig {
        query_rewrite: mode,
        rate_limit_per_minute: 0,
        answer_cache: false,
        ..ChatConfig::default()
    };
    tune(&mut config);
    ChatService::new(
        Some(llm),
        Arc::new(MemoryConversationStore::new()),
        config,
        TOP_K,
        MIN_SCORE,
    )
}

async fn ask(service: &ChatService, index: &SearchIndex, question: &str) -> ChatResponse {
    let body = serde_json::json!({ "message": question }).to_string();
    let req = ChatRequest::from_json(body.as_bytes(), service.config()).unwrap();
    service
        .chat(index, req, RequestContext::new("r-1"))
        .await
        .unwrap()
}

fn ids(r: &ChatResponse) -> Vec<String> {
    r.sources.iter().map(|s| s.id.clone()).collect()
}

/// The ids the question's own ranking gives, as the chat ranks it without a rewrite.
fn own_ranking(index: &SearchIndex, question: &str) -> Vec<String> {
    let (_, hits) = index.rank(question, TOP_K, MIN_SCORE);
    hits.iter()
        .map(|h| index.kb().documents[h.doc as usize].id.clone())
        .collect()
}

async fn used(service: &ChatService, index: &SearchIndex) -> u64 {
    service.health(index).await.limits.budget.unwrap().used
}

fn answer() -> Behavior {
    Behavior::Answer {
        chunks: vec!["Use ".into(), "git reflog.".into()],
        delay: Duration::ZERO,
    }
}

#[tokio::test]
async fn a_question_in_another_language_is_expanded_once_and_fused() {
    let index = index();
    assert!(
        !own_ranking(&index, QUESTION).contains(&"reflog".to_string()),
        "the question alone must not find the page, or the test proves nothing"
    );
    let fake = FakeLlm::start(vec![
        Behavior::Json {
            text: EXPANSION.into(),
        },
        answer(),
    ])
    .await;
    let service = service(&fake, QueryRewrite::default(), |_| {});
    let r = ask(&service, &index, QUESTION).await;

    assert!(ids(&r).contains(&"reflog".to_string()), "{:?}", ids(&r));
    assert!(r.done.retrieval.fused);
    assert_eq!(
        r.done.retrieval.rewritten_query.as_deref(),
        Some("recover a lost commit with reflog")
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "one expansion call, one answer");
    let call = &requests[0].body;
    assert_eq!(call["max_tokens"], 128);
    let system = call["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("English") && system.contains("passage:"),
        "{system}"
    );
    assert!(call["messages"][1]["content"]
        .as_str()
        .unwrap()
        .ends_with(QUESTION));
    // The budget counts both calls as the fake reports them: the answer's usage, and the
    // expansion's (10 prompt tokens and one per word of its text).
    let expansion = u64::from(PROMPT_TOKENS) + EXPANSION.split_whitespace().count() as u64;
    let answer = u64::from(r.done.usage.total_tokens);
    assert!(answer > 0);
    assert_eq!(used(&service, &index).await, expansion + answer);
}

#[tokio::test]
async fn a_rewrite_model_is_asked_instead_of_the_answering_one() {
    let index = index();
    let fake = FakeLlm::start(vec![
        Behavior::Json {
            text: EXPANSION.into(),
        },
        answer(),
    ])
    .await;
    let mut cheap = fake.config();
    cheap.model = "cheap-model".into();
    let service = service(&fake, QueryRewrite::CrossLanguage, |_| {})
        .with_rewrite_llm(Arc::new(OpenAiCompatClient::new(cheap).unwrap()));
    let r = ask(&service, &index, QUESTION).await;
    assert!(ids(&r).contains(&"reflog".to_string()));
    let models: Vec<String> = fake
        .requests()
        .iter()
        .map(|q| q.body["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(models, ["cheap-model", "fake-model"]);
}

#[tokio::test]
async fn a_failed_or_slow_expansion_leaves_the_question_s_own_ranking() {
    let index = index();
    let own = own_ranking(&index, QUESTION);
    assert!(!own.is_empty());
    // A provider error (not retried: 400) costs nothing; a call past the timeout costs
    // what was reserved for it, as an answer cut short would.
    for (first, slow) in [(Behavior::status(400), false), (Behavior::Stall, true)] {
        let fake = FakeLlm::start(vec![first, answer()]).await;
        let service = service(&fake, QueryRewrite::CrossLanguage, |c| {
            c.rewrite_timeout = Duration::from_millis(150);
        });
        let r = ask(&service, &index, QUESTION).await;
        assert_eq!(ids(&r), own, "slow: {slow}");
        assert!(!r.done.retrieval.fused && r.done.retrieval.rewritten_query.is_none());
        assert_eq!(fake.request_count(), 2, "slow: {slow}");
        let answer_tokens = u64::from(r.done.usage.total_tokens);
        let spent = used(&service, &index).await;
        if slow {
            assert!(spent > answer_tokens + 128, "{spent}");
        } else {
            assert_eq!(spent, answer_tokens);
        }
    }
}

#[tokio::test]
async fn off_makes_no_call_and_weak_leaves_a_strong_question_alone() {
    let index = index();
    let fake = FakeLlm::start(vec![answer()]).await;
    let off = service(&fake, QueryRewrite::Off, |_| {});
    let r = ask(&off, &index, QUESTION).await;
    assert_eq!(fake.request_count(), 1, "only the answer");
    assert_eq!(ids(&r), own_ranking(&index, QUESTION));
    assert!(!r.done.retrieval.fused);

    // A Chinese question naming the page's title words retrieves strongly: `weak` does not
    // expand it, `cross_language` does (it is not in the site's language).
    let strong = "git stash 是做什么的";
    assert_eq!(
        own_ranking(&index, strong).first().map(String::as_str),
        Some("stash")
    );
    let fake = FakeLlm::start(vec![answer()]).await;
    ask(&service(&fake, QueryRewrite::Weak, |_| {}), &index, strong).await;
    assert_eq!(fake.request_count(), 1);
    let fake = FakeLlm::start(vec![
        Behavior::Json {
            text: "query: what git stash does".into(),
        },
        answer(),
    ])
    .await;
    let r = ask(
        &service(&fake, QueryRewrite::CrossLanguage, |_| {}),
        &index,
        strong,
    )
    .await;
    assert_eq!(fake.request_count(), 2);
    assert_eq!(ids(&r)[0], "stash");
    // An English question on the English site is expanded only under `always`.
    let english = "What does git stash do?";
    let fake = FakeLlm::start(vec![answer()]).await;
    ask(
        &service(&fake, QueryRewrite::CrossLanguage, |_| {}),
        &index,
        english,
    )
    .await;
    assert_eq!(fake.request_count(), 1);
    let fake = FakeLlm::start(vec![
        Behavior::Json {
            text: "query: git stash".into(),
        },
        answer(),
    ])
    .await;
    ask(
        &service(&fake, QueryRewrite::Always, |_| {}),
        &index,
        english,
    )
    .await;
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn an_english_question_whose_words_are_on_many_pages_alike_is_expanded_by_default() {
    // Twelve of 53 pages say "run" and "code" alike, none is about timing; the page that
    // answers shares no word with the question. The ranking is flat, though each page
    // matches.
    let mut documents: Vec<_> = (0..12)
        .map(|i| {
            page(
                &format!("mode{i}"),
                &format!("Mode {i}"),
                &format!("To run code in mode {i}, pass the flag for mode {i} before the file."),
            )
        })
        .collect();
    // Other pages, so that "run" and "code" are not on nearly every page of the site.
    documents.extend((0..40).map(|i| {
        page(
            &format!("theme{i}"),
            &format!("Theme {i}"),
            &format!("Theme {i} sets the colours and fonts of the window and its menus."),
        )
    }));
    documents.push(page(
        "timing",
        "Timing utilities",
        "tic starts a wall-clock timer and toc reports the elapsed seconds.",
    ));
    let index = index_of(documents);
    let question = "measure how long my code takes to run";
    let (_, hits) = index.rank(question, 30, MIN_SCORE);
    assert!(hits.len() >= 10 && !own_ranking(&index, question).contains(&"timing".into()));

    let fake = FakeLlm::start(vec![
        Behavior::Json {
            text: "query: time code with tic and toc\n\
                   passage: tic starts a timer; toc reports the elapsed seconds since."
                .into(),
        },
        answer(),
    ])
    .await;
    let r = ask(
        &service(&fake, QueryRewrite::default(), |_| {}),
        &index,
        question,
    )
    .await;
    assert_eq!(fake.request_count(), 2, "one expansion call, one answer");
    assert!(r.done.retrieval.fused);
    assert_eq!(
        ids(&r).first().map(String::as_str),
        Some("timing"),
        "{:?}",
        ids(&r)
    );
}
