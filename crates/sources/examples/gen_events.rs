//! Writes the nested benchmark's data: N deterministic NDJSON documents shaped like GitHub's
//! public events (GH Archive) — `id, type, actor{..}, repo{..}, payload{..}, public, created_at,
//! org?{..}` — whose payload differs by event type (pushes with commit arrays, pull requests with
//! head and base repositories, issues with labels, forks, releases, ...): about 1.7 KB a document
//! and 360 property paths, the nested counterpart of `gen_anchor`.
//!
//! `cargo run --release -p schemascope-sources --example gen_events -- N OUT`

use std::fmt::Write as _;
use std::io::Write as _;

/// A small seeded generator (xorshift64*): the same file on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn words(&mut self, n: u64) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
        }
        s
    }

    fn hex(&mut self, out: &mut String, digits: usize) {
        let mut v = 0u64;
        for i in 0..digits {
            if i % 16 == 0 {
                v = self.next();
            }
            out.push(char::from(b"0123456789abcdef"[(v & 15) as usize]));
            v >>= 4;
        }
    }
}

const WORDS: [&str; 24] = [
    "fix", "add", "update", "remove", "refactor", "docs", "test", "build", "parser", "cache",
    "error", "handling", "config", "release", "bump", "deps", "api", "client", "server", "typo",
    "readme", "ci", "lint", "memory",
];
const LANGS: [&str; 10] =
    ["Rust", "Python", "JavaScript", "Go", "TypeScript", "Java", "C++", "Ruby", "Shell", "C"];
const LICENSES: [(&str, &str); 4] = [
    ("mit", "MIT License"),
    ("apache-2.0", "Apache License 2.0"),
    ("gpl-3.0", "GNU General Public License v3.0"),
    ("bsd-3-clause", r#"BSD 3-Clause \"New\" or \"Revised\" License"#),
];
const LABELS: [&str; 8] = [
    "bug",
    "enhancement",
    "question",
    "documentation",
    "good first issue",
    "wontfix",
    "duplicate",
    "help wanted",
];
const ACTIONS: [&str; 3] = ["opened", "closed", "reopened"];

/// The event types, GH Archive's mix (percent).
const TYPES: [(&str, u64); 12] = [
    ("PushEvent", 48),
    ("CreateEvent", 12),
    ("WatchEvent", 9),
    ("PullRequestEvent", 8),
    ("IssueCommentEvent", 6),
    ("IssuesEvent", 4),
    ("DeleteEvent", 3),
    ("ForkEvent", 3),
    ("PullRequestReviewEvent", 3),
    ("ReleaseEvent", 2),
    ("GollumEvent", 1),
    ("MemberEvent", 1),
];

/// Writes the events one line at a time.
struct Writer {
    rng: Rng,
    line: String,
    /// Seconds since the epoch of the current event.
    now: i64,
}

impl Writer {
    /// A short actor (as in `actor`).
    fn actor(&mut self, id: u64) {
        let login = login(id);
        let _ = write!(
            self.line,
            r#"{{"id":{id},"login":"{login}","display_login":"{login}","gravatar_id":"","url":"https://api.github.com/users/{login}","avatar_url":"https://avatars.githubusercontent.com/u/{id}?"}}"#
        );
    }

    /// A full user object (18 fields).
    fn user(&mut self, id: u64) {
        let login = login(id);
        let kind = if id.is_multiple_of(17) { "Organization" } else { "User" };
        let u = format!("https://api.github.com/users/{login}");
        let _ = write!(
            self.line,
            r#"{{"login":"{login}","id":{id},"node_id":"MDQ6VXNlcj{id:08}","avatar_url":"https://avatars.githubusercontent.com/u/{id}?v=4","gravatar_id":"","url":"{u}","html_url":"https://github.com/{login}","followers_url":"{u}/followers","following_url":"{u}/following{{/other_user}}","repos_url":"{u}/repos","type":"{kind}","site_admin":false}}"#
        );
    }

    /// A full repository object (about 45 fields, an owner and a license).
    fn repository(&mut self, id: u64) {
        let owner = id / 7 + 1000;
        let login = login(owner);
        let name = format!("{}-{}", WORDS[(id % 24) as usize], id % 10_007);
        let full = format!("{login}/{name}");
        let a = format!("https://api.github.com/repos/{full}");
        let desc = if self.rng.chance(20) {
            "null".to_string()
        } else {
            format!("\"{}\"", self.rng.words(6))
        };
        let _ = write!(
            self.line,
            r#"{{"id":{id},"node_id":"MDEwOlJlcG9zaXRvcnk{id:09}","name":"{name}","full_name":"{full}","private":false,"owner":"#
        );
        self.actor(owner);
        let created = time(&mut self.rng, self.now, 300_000_000);
        let updated = time(&mut self.rng, self.now, 10_000_000);
        let size = self.rng.below(500_000);
        let stars = self.rng.below(100) * self.rng.below(100) * self.rng.below(20);
        let forks = stars / (1 + self.rng.below(10));
        let issues = self.rng.below(300);
        let lang = if self.rng.chance(10) {
            "null".to_string()
        } else {
            format!("\"{}\"", LANGS[self.rng.below(10) as usize])
        };
        let _ = write!(
            self.line,
            r#","html_url":"https://github.com/{full}","description":{desc},"fork":{},"url":"{a}","forks_url":"{a}/forks","pulls_url":"{a}/pulls{{/number}}","created_at":"{created}","updated_at":"{updated}","pushed_at":"{updated}","clone_url":"https://github.com/{full}.git","homepage":null,"size":{size},"stargazers_count":{stars},"watchers_count":{stars},"language":{lang},"has_issues":true,"forks_count":{forks},"open_issues_count":{issues},"license":"#,
            self.rng.chance(5),
        );
        if self.rng.chance(30) {
            self.line.push_str("null");
        } else {
            let (key, lname) = LICENSES[self.rng.below(4) as usize];
            let _ = write!(
                self.line,
                r#"{{"key":"{key}","name":"{lname}","spdx_id":"{}","url":"https://api.github.com/licenses/{key}","node_id":"MDc6TGljZW5zZTI{}"}}"#,
                key.to_uppercase(),
                key.len()
            );
        }
        let topics = self.rng.below(4);
        self.line.push_str(r#","topics":["#);
        for t in 0..topics {
            if t > 0 {
                self.line.push(',');
            }
            let _ = write!(self.line, "\"{}\"", WORDS[self.rng.below(24) as usize]);
        }
        let _ = write!(
            self.line,
            r#"],"forks":{forks},"default_branch":"{}"}}"#,
            if self.rng.chance(80) { "main" } else { "master" }
        );
    }

    /// A branch of a pull request (head or base).
    fn branch(&mut self, repo: u64, name: &str) {
        let owner = repo / 7 + 1000;
        let login = login(owner);
        let mut sha = String::new();
        self.rng.hex(&mut sha, 40);
        let _ =
            write!(self.line, r#"{{"label":"{login}:{name}","ref":"{name}","sha":"{sha}","repo":"#);
        self.repository(repo);
        self.line.push('}');
    }

    fn labels(&mut self) {
        self.line.push('[');
        for l in 0..self.rng.below(3) {
            if l > 0 {
                self.line.push(',');
            }
            let i = self.rng.below(8);
            let _ = write!(
                self.line,
                r#"{{"id":{},"node_id":"MDU6TGFiZWw{i}","url":"https://api.github.com/labels/{i}","name":"{}","color":"{:06x}","default":{},"description":"{}"}}"#,
                100_000 + i,
                LABELS[i as usize],
                i * 1_234_567 % 0xff_ffff,
                i < 4,
                LABELS[i as usize]
            );
        }
        self.line.push(']');
    }

    /// An issue (or the issue of a comment).
    fn issue(&mut self, repo_url: &str, number: u64, user: u64) {
        let title = self.rng.words(5);
        let state = if self.rng.chance(70) { "open" } else { "closed" };
        let created = time(&mut self.rng, self.now, 50_000_000);
        let _ = write!(
            self.line,
            r#"{{"url":"{repo_url}/issues/{number}","repository_url":"{repo_url}","id":{},"node_id":"I_kwDO{number:07}","number":{number},"title":"{title}","user":"#,
            900_000_000 + self.rng.below(900_000_000)
        );
        self.user(user);
        self.line.push_str(r#","labels":"#);
        self.labels();
        let body = if self.rng.chance(15) {
            "null".to_string()
        } else {
            format!(
                "\"{}\\n\\n{}\\r\\n- [ ] {}\"",
                self.rng.words(12),
                self.rng.words(20),
                self.rng.words(4)
            )
        };
        let _ = write!(
            self.line,
            r#","state":"{state}","locked":false,"assignee":null,"assignees":[],"milestone":null,"comments":{},"created_at":"{created}","updated_at":"{}","closed_at":{},"author_association":"{}","active_lock_reason":null,"body":{body},"state_reason":null}}"#,
            self.rng.below(40),
            time(&mut self.rng, self.now, 1_000_000),
            if state == "closed" {
                format!("\"{}\"", time(&mut self.rng, self.now, 100_000))
            } else {
                "null".into()
            },
            ["NONE", "CONTRIBUTOR", "MEMBER", "OWNER"][self.rng.below(4) as usize],
        );
    }

    fn comment(&mut self, repo_url: &str, user: u64) {
        let id = 1_000_000_000 + self.rng.below(1_000_000_000);
        let _ = write!(
            self.line,
            r#"{{"url":"{repo_url}/issues/comments/{id}","html_url":"{repo_url}#issuecomment-{id}","id":{id},"node_id":"IC_kwDO{id}","user":"#
        );
        self.user(user);
        let created = time(&mut self.rng, self.now, 1_000);
        let _ = write!(
            self.line,
            r#","created_at":"{created}","updated_at":"{created}","author_association":"{}","body":"{}\n\n> {}","performed_via_github_app":null}}"#,
            ["NONE", "CONTRIBUTOR", "MEMBER"][self.rng.below(3) as usize],
            self.rng.words(15),
            self.rng.words(5)
        );
    }

    fn pull_request(&mut self, repo: u64, number: u64, user: u64) {
        let owner = repo / 7 + 1000;
        let a = format!(
            "https://api.github.com/repos/{}/{}-{}",
            login(owner),
            WORDS[(repo % 24) as usize],
            repo % 10_007
        );
        let state = if self.rng.chance(60) { "open" } else { "closed" };
        let merged = state == "closed" && self.rng.chance(70);
        let created = time(&mut self.rng, self.now, 5_000_000);
        let _ = write!(
            self.line,
            r#"{{"url":"{a}/pulls/{number}","id":{},"node_id":"PR_kwDO{number:08}","html_url":"{a}/pull/{number}","issue_url":"{a}/issues/{number}","number":{number},"state":"{state}","locked":false,"title":"{}","user":"#,
            1_000_000_000 + self.rng.below(1_000_000_000),
            self.rng.words(6)
        );
        self.user(user);
        let body = if self.rng.chance(25) {
            "null".into()
        } else {
            format!("\"{}\\n\\nFixes #{}\"", self.rng.words(25), self.rng.below(number + 1))
        };
        let _ = write!(
            self.line,
            r#","body":{body},"created_at":"{created}","updated_at":"{}","closed_at":{},"merged_at":{},"merge_commit_sha":"#,
            time(&mut self.rng, self.now, 1_000),
            if state == "closed" {
                format!("\"{}\"", time(&mut self.rng, self.now, 500))
            } else {
                "null".into()
            },
            if merged {
                format!("\"{}\"", time(&mut self.rng, self.now, 500))
            } else {
                "null".into()
            },
        );
        let mut sha = String::new();
        self.rng.hex(&mut sha, 40);
        let _ = write!(
            self.line,
            r#""{sha}","assignee":null,"assignees":[],"requested_reviewers":[],"labels":"#
        );
        self.labels();
        let _ = write!(self.line, r#","draft":{},"head":"#, self.rng.chance(10));
        let head_repo = if self.rng.chance(60) { repo } else { repo + 1 + self.rng.below(1000) };
        let head_name = format!("{}-{}", WORDS[self.rng.below(24) as usize], self.rng.below(1000));
        self.branch(head_repo, &head_name);
        self.line.push_str(r#","base":"#);
        self.branch(repo, "main");
        let _ = write!(
            self.line,
            r#","author_association":"{}","auto_merge":null,"merged":{merged},"mergeable":null,"comments":{},"review_comments":{},"commits":{},"additions":{},"deletions":{},"changed_files":{}}}"#,
            ["NONE", "CONTRIBUTOR", "MEMBER", "OWNER"][self.rng.below(4) as usize],
            self.rng.below(20),
            self.rng.below(30),
            1 + self.rng.below(15),
            self.rng.below(2000),
            self.rng.below(800),
            1 + self.rng.below(40),
        );
    }

    fn event(&mut self, i: u64) {
        self.line.clear();
        self.now = 1_704_067_200 + (i / 4) as i64;
        let mut pick = self.rng.below(100);
        let mut kind = TYPES[0].0;
        for (name, share) in TYPES {
            if pick < share {
                kind = name;
                break;
            }
            pick -= share;
        }
        let actor = 1 + self.rng.below(400_000) * self.rng.below(400) / 100;
        let repo = 10_000_000 + self.rng.below(2_000_000) * self.rng.below(100) / 50;
        let owner = repo / 7 + 1000;
        let repo_name =
            format!("{}/{}-{}", login(owner), WORDS[(repo % 24) as usize], repo % 10_007);
        let repo_url = format!("https://api.github.com/repos/{repo_name}");
        let _ = write!(self.line, r#"{{"id":"{}","type":"{kind}","actor":"#, 30_000_000_000 + i);
        self.actor(actor);
        let _ = write!(
            self.line,
            r#","repo":{{"id":{repo},"name":"{repo_name}","url":"{repo_url}"}},"payload":"#
        );
        match kind {
            "PushEvent" => {
                let size = 1 + self.rng.below(3) * self.rng.below(3);
                let mut head = String::new();
                self.rng.hex(&mut head, 40);
                let mut before = String::new();
                self.rng.hex(&mut before, 40);
                let _ = write!(
                    self.line,
                    r#"{{"repository_id":{repo},"push_id":{},"size":{size},"distinct_size":{size},"ref":"refs/heads/{}","head":"{head}","before":"{before}","commits":["#,
                    15_000_000_000 + i,
                    if self.rng.chance(70) { "main" } else { "dev" }
                );
                for c in 0..size {
                    if c > 0 {
                        self.line.push(',');
                    }
                    let mut sha = String::new();
                    self.rng.hex(&mut sha, 40);
                    let login = login(actor);
                    let _ = write!(
                        self.line,
                        r#"{{"sha":"{sha}","author":{{"email":"{login}@users.noreply.github.com","name":"{login}"}},"message":"{}\n\n{}","distinct":true,"url":"{repo_url}/commits/{sha}"}}"#,
                        self.rng.words(4),
                        self.rng.words(9)
                    );
                }
                self.line.push_str("]}");
            }
            "CreateEvent" | "DeleteEvent" => {
                let ref_type = ["branch", "tag", "repository"][self.rng.below(3) as usize];
                let _ = write!(
                    self.line,
                    r#"{{"ref":"{}-{}","ref_type":"{ref_type}""#,
                    WORDS[self.rng.below(24) as usize],
                    self.rng.below(100)
                );
                if kind == "CreateEvent" {
                    let _ = write!(
                        self.line,
                        r#","master_branch":"main","description":"{}""#,
                        self.rng.words(5)
                    );
                }
                self.line.push_str(r#","pusher_type":"user"}"#);
            }
            "WatchEvent" => self.line.push_str(r#"{"action":"started"}"#),
            "PullRequestEvent" => {
                let number = 1 + self.rng.below(5000);
                let _ = write!(
                    self.line,
                    r#"{{"action":"{}","number":{number},"pull_request":"#,
                    ACTIONS[self.rng.below(3) as usize]
                );
                self.pull_request(repo, number, actor);
                self.line.push('}');
            }
            "PullRequestReviewEvent" => {
                let number = 1 + self.rng.below(5000);
                let id = 1_500_000_000 + self.rng.below(100_000_000);
                let _ = write!(
                    self.line,
                    r#"{{"action":"created","review":{{"id":{id},"node_id":"PRR_kwDO{id}","user":"#
                );
                self.user(actor);
                let mut sha = String::new();
                self.rng.hex(&mut sha, 40);
                let _ = write!(
                    self.line,
                    r#","body":{},"commit_id":"{sha}","submitted_at":"{}","state":"{}","html_url":"{repo_url}/pull/{number}#pullrequestreview-{id}","author_association":"MEMBER"}},"pull_request":"#,
                    if self.rng.chance(50) {
                        "null".into()
                    } else {
                        format!("\"{}\"", self.rng.words(8))
                    },
                    time(&mut self.rng, self.now, 100),
                    ["approved", "commented", "changes_requested"][self.rng.below(3) as usize]
                );
                let reviewer = 1 + self.rng.below(400_000);
                self.pull_request(repo, number, reviewer);
                self.line.push('}');
            }
            "IssueCommentEvent" => {
                let number = 1 + self.rng.below(5000);
                self.line.push_str(r#"{"action":"created","issue":"#);
                let author = 1 + self.rng.below(400_000);
                self.issue(&repo_url, number, author);
                self.line.push_str(r#","comment":"#);
                self.comment(&repo_url, actor);
                self.line.push('}');
            }
            "IssuesEvent" => {
                let number = 1 + self.rng.below(5000);
                let _ = write!(
                    self.line,
                    r#"{{"action":"{}","issue":"#,
                    ACTIONS[self.rng.below(3) as usize]
                );
                self.issue(&repo_url, number, actor);
                self.line.push('}');
            }
            "ForkEvent" => {
                self.line.push_str(r#"{"forkee":"#);
                let forkee = 20_000_000 + self.rng.below(5_000_000);
                self.repository(forkee);
                self.line.push('}');
            }
            "ReleaseEvent" => {
                let id = 100_000_000 + self.rng.below(50_000_000);
                let tag =
                    format!("v{}.{}.{}", self.rng.below(5), self.rng.below(20), self.rng.below(10));
                let _ = write!(
                    self.line,
                    r#"{{"action":"published","release":{{"url":"{repo_url}/releases/{id}","id":{id},"tag_name":"{tag}","target_commitish":"main","name":"{tag}","draft":false,"prerelease":{},"created_at":"{}","published_at":"{}","author":"#,
                    self.rng.chance(15),
                    time(&mut self.rng, self.now, 1_000),
                    time(&mut self.rng, self.now, 100)
                );
                self.user(actor);
                let _ = write!(
                    self.line,
                    r#","assets":[],"body":"{}\n* {}"}}}}"#,
                    self.rng.words(10),
                    self.rng.words(6)
                );
            }
            "GollumEvent" => {
                let _ = write!(
                    self.line,
                    r#"{{"pages":[{{"page_name":"{}","title":"{}","summary":null,"action":"edited","sha":"#,
                    WORDS[self.rng.below(24) as usize],
                    self.rng.words(2)
                );
                let mut sha = String::new();
                self.rng.hex(&mut sha, 40);
                let _ = write!(
                    self.line,
                    r#""{sha}","html_url":"https://github.com/{repo_name}/wiki"}}]}}"#
                );
            }
            _ => {
                self.line.push_str(r#"{"member":"#);
                let member = 1 + self.rng.below(400_000);
                self.user(member);
                self.line.push_str(r#","action":"added"}"#);
            }
        }
        let created = rfc3339(self.now);
        let _ = write!(self.line, r#","public":true,"created_at":"{created}""#);
        if self.rng.chance(25) {
            let org = 5_000_000 + self.rng.below(20_000);
            let login = login(org);
            let _ = write!(
                self.line,
                r#","org":{{"id":{org},"login":"{login}","gravatar_id":"","url":"https://api.github.com/orgs/{login}","avatar_url":"https://avatars.githubusercontent.com/u/{org}?"}}"#
            );
        }
        self.line.push_str("}\n");
    }
}

/// A user's login, from their id.
fn login(id: u64) -> String {
    format!("{}-{}{}", WORDS[(id % 24) as usize], WORDS[(id / 24 % 24) as usize], id % 977)
}

/// A time up to `back` seconds before `now`, as RFC 3339.
fn time(rng: &mut Rng, now: i64, back: i64) -> String {
    rfc3339(now - rng.below(back.max(1) as u64) as i64)
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(n), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: gen_events N OUT");
        std::process::exit(2);
    };
    let n: u64 = n.parse().map_err(|_| std::io::Error::other("N must be a whole number"))?;
    let file = std::fs::File::create(&out)?;
    let mut w = std::io::BufWriter::with_capacity(4 << 20, file);
    let mut writer =
        Writer { rng: Rng(0x2545_f491_4f6c_dd1d), line: String::with_capacity(16 << 10), now: 0 };
    for i in 0..n {
        writer.event(i);
        w.write_all(writer.line.as_bytes())?;
    }
    w.flush()
}

/// `seconds` since the Unix epoch as RFC 3339 UTC (civil-from-days, Howard Hinnant's algorithm).
fn rfc3339(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rem = seconds.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
