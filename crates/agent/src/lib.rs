//! The question-to-query pipeline — a controlled graph whose LLM nodes write the query and the
//! answer while fixed code validates, executes, retries and explains — and the LLM backends it
//! calls.

#![forbid(unsafe_code)]

pub mod graph;
pub mod llm;
#[cfg(feature = "replay")]
pub mod replay;
