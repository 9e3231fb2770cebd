//! A ClickHouse server whose answer is one endless line (a hostile or broken peer, or a huge
//! single value): reading stops at the line limit, and what the result says is what was read —
//! the bytes received of that row and the limit that applied — never the caller's cap alone.
//! A fake HTTP server plays ClickHouse: it answers the connection's probes with empty results and
//! the statement with a header and then `x` without end, until the client hangs up.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use schemascope_sources::sql::{Caps, ClickHouseDatabase, Cut, Database};

/// What the fake answers a statement: the probe's version and `readonly` setting, the endless
/// line, or an empty result of one column.
fn answer(mut stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut length = 0usize;
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        line.clear();
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body = String::from_utf8_lossy(&body);
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/tab-separated-values\r\nConnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    if body.contains("system.settings") {
        let _ = stream.write_all(b"18.16.1\t0\n");
    } else if body.contains("endless") {
        let _ = stream.write_all(b"s\nString\n");
        let chunk = vec![b'x'; 1 << 20];
        // Until the client stops reading and closes the connection.
        while stream.write_all(&chunk).is_ok() {}
    } else {
        let _ = stream.write_all(b"name\nString\n");
    }
}

/// Starts the fake on a free loopback port; returns its URI.
fn fake_clickhouse() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    format!("clickhouse://default@127.0.0.1:{port}/default")
}

#[test]
fn an_endless_line_is_cut_and_the_result_states_the_bytes_read_not_the_cap() {
    let db = ClickHouseDatabase::connect(&fake_clickhouse()).expect("connect to the fake");
    // The cap a caller could pass (10^12): the line limit, not the cap, stops the reading.
    let cap = 1_000_000_000_000usize;
    let read = db
        .run_capped(
            "SELECT 'endless' AS s",
            &[],
            Caps { max_rows: Some(10), max_bytes: Some(cap) },
            30_000,
        )
        .expect("a cut result, not an error");
    assert_eq!((read.rows.len(), read.cut, read.rows_read), (0, Some(Cut::Bytes), 1));
    let row = read.cut_row.expect("the row that passed is described");
    let limit = row.read_limit.expect("the limit that applied");
    assert!(!row.whole, "reading stopped inside the row");
    assert!(limit < cap && limit == 256 << 20, "the line limit applied, not the cap: {limit}");
    // Received: past the limit by at most what one read brings in, never the cap.
    assert!(row.bytes > limit && row.bytes <= limit + (1 << 20), "{}", row.bytes);

    // With a small cap, the limit is the cap's room (twice it plus 4 KiB): still what was read.
    let small = db
        .run_capped(
            "SELECT 'endless' AS s",
            &[],
            Caps { max_rows: Some(10), max_bytes: Some(1_000) },
            30_000,
        )
        .expect("a cut result");
    let row = small.cut_row.expect("described");
    assert_eq!(row.read_limit, Some(2 * 1_000 + 4096));
    assert!(!row.whole && row.bytes > 6096 && row.bytes <= 6096 + (1 << 20), "{row:?}");
}
