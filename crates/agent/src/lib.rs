//! The question-to-query pipeline and the LLM backends it calls.

pub mod llm;
#[cfg(feature = "replay")]
pub mod replay;
