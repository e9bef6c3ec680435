//! Why the bot check refused a request's proof of work.

/// Why a request's proof was refused; each is a 403 with its own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotCheckError {
    /// The request carries no proof.
    Required,
    /// The proof is malformed, was not issued here or to this address, or its work falls
    /// short.
    Failed,
    /// The proof was valid but its challenge has expired: solve a new one.
    Expired,
}

impl BotCheckError {
    /// The error code sent to the client.
    pub fn code(self) -> &'static str {
        match self {
            Self::Required => "bot_check_required",
            Self::Failed => "bot_check_failed",
            Self::Expired => "bot_check_expired",
        }
    }

    /// What the client should do, for the error message.
    pub fn message(self) -> &'static str {
        match self {
            Self::Required => {
                "this chat requires a solved challenge: GET ?challenge, solve it and send it as \"proof\""
            }
            Self::Failed => {
                "the proof does not solve a challenge issued to this client: GET ?challenge and solve it again"
            }
            Self::Expired => "the challenge has expired: GET ?challenge and solve a new one",
        }
    }
}
