//! The answer cache in an instance's memory, bounded in entries and time.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{AnswerCache, CachedAnswer};
use crate::store::StoreError;

/// An [`AnswerCache`] holding at most `capacity` answers for `ttl` each; when full, the
/// oldest answer makes room.
#[derive(Debug)]
pub struct MemoryAnswerCache {
    ttl: Duration,
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    answers: HashMap<String, (Instant, CachedAnswer)>,
    /// Keys in the order they were stored, oldest first.
    order: VecDeque<String>,
}

impl MemoryAnswerCache {
    /// A cache of at most `capacity` answers, each kept for `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self {
            ttl,
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// Answers held now (expired ones included until they are evicted).
    pub fn len(&self) -> usize {
        self.lock().answers.len()
    }

    /// Whether no answer is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every critical section leaves the maps consistent, so a panic elsewhere while
        // holding the lock leaves nothing half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl AnswerCache for MemoryAnswerCache {
    async fn get(&self, key: &str) -> Result<Option<CachedAnswer>, StoreError> {
        let state = self.lock();
        Ok(state
            .answers
            .get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, a)| a.clone()))
    }

    async fn put(&self, key: &str, answer: &CachedAnswer) -> Result<(), StoreError> {
        let mut state = self.lock();
        if let Some((at, _)) = state.answers.get(key) {
            if at.elapsed() < self.ttl {
                return Ok(());
            }
            state.order.retain(|k| k != key);
        }
        while state.answers.len() >= self.capacity {
            match state.order.pop_front() {
                Some(oldest) => {
                    state.answers.remove(&oldest);
                }
                None => break,
            }
        }
        state
            .answers
            .insert(key.to_owned(), (Instant::now(), answer.clone()));
        state.order.push_back(key.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> CachedAnswer {
        CachedAnswer {
            reply: text.to_owned(),
            model: "m".to_owned(),
            grounding: None,
        }
    }

    #[tokio::test]
    async fn the_first_answer_stays_and_the_oldest_makes_room() {
        let cache = MemoryAnswerCache::new(2, Duration::from_secs(60));
        cache.put("a", &answer("first")).await.unwrap();
        cache.put("a", &answer("second")).await.unwrap();
        assert_eq!(cache.get("a").await.unwrap(), Some(answer("first")));
        cache.put("b", &answer("b")).await.unwrap();
        cache.put("c", &answer("c")).await.unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("a").await.unwrap(), None);
        assert_eq!(cache.get("c").await.unwrap(), Some(answer("c")));
    }

    #[tokio::test]
    async fn an_expired_answer_is_not_found_and_can_be_replaced() {
        let cache = MemoryAnswerCache::new(4, Duration::ZERO);
        cache.put("a", &answer("old")).await.unwrap();
        assert_eq!(cache.get("a").await.unwrap(), None);
        cache.put("a", &answer("new")).await.unwrap();
        assert_eq!(cache.len(), 1);
    }
}
