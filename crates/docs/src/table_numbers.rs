//! Each chunk's table as a number, and each such table's foreign-key neighbours as numbers,
//! resolved once when an index is built: ranking compares numbers instead of looking tables up
//! in the catalog by name for every hit.

use foldhash::HashMap;
use schemascope_core::Catalog;

use crate::chunk::Chunk;

/// The tables of an index's chunks, numbered.
#[derive(Debug, Clone, Default)]
pub(crate) struct TableNumbers {
    /// Per chunk, its table's number.
    of_chunk: Vec<u32>,
    /// Per table number, the numbers of its neighbours ([`Catalog::neighbours`]) that have
    /// chunks.
    neighbours: Vec<Vec<u32>>,
}

impl TableNumbers {
    /// Numbers the tables of `chunks` as ranking names them: the catalog's table the chunk's
    /// table resolves to ([`Catalog::table`]), else the chunk's own table name. Two chunks get
    /// the same number exactly when those names are equal.
    pub(crate) fn new(catalog: &Catalog, chunks: &[Chunk]) -> Self {
        let mut number: HashMap<&str, u32> = HashMap::default();
        let mut names: Vec<&str> = Vec::new();
        // Chunks of one table come together: resolve each distinct name once.
        let mut resolved: HashMap<&str, u32> = HashMap::default();
        let of_chunk = chunks
            .iter()
            .map(|chunk| {
                *resolved.entry(chunk.table.as_str()).or_insert_with(|| {
                    let name = catalog
                        .table(&chunk.table)
                        .map_or(chunk.table.as_str(), |t| t.name.as_str());
                    *number.entry(name).or_insert_with(|| {
                        names.push(name);
                        (names.len() - 1) as u32
                    })
                })
            })
            .collect();
        let neighbours = names
            .iter()
            .map(|name| {
                catalog.neighbours(name).iter().filter_map(|n| number.get(n).copied()).collect()
            })
            .collect();
        Self { of_chunk, neighbours }
    }

    /// The number of chunk `doc`'s table.
    pub(crate) fn of(&self, doc: u32) -> u32 {
        self.of_chunk.get(doc as usize).copied().unwrap_or(u32::MAX)
    }

    /// The numbers of table `table`'s neighbours.
    pub(crate) fn neighbours(&self, table: u32) -> &[u32] {
        self.neighbours.get(table as usize).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use schemascope_core::catalog::{ColumnInfo, ForeignKey, TableInfo, TableKind};
    use schemascope_core::terms::{question_weight, tokenize};

    use crate::bm25::{Hit, Scratch};
    use crate::eval::{index_from_generated_docs, pooled_catalog, spider_databases};
    use crate::retrieve::SchemaIndex;
    use crate::{ColumnNotes, RetrievalConfig, parse_docs};

    /// The order `SchemaIndex::favour_connected` gave when it looked every table up by name:
    /// the reference the numbered tables must reproduce.
    fn by_name(index: &SchemaIndex, hits: &mut [Hit]) {
        if hits.len() < 2 {
            return;
        }
        let table_of = |hit: &Hit| {
            let name = &index.chunks[hit.doc as usize].table;
            index.catalog.table(name).map_or(name.as_str(), |t| t.name.as_str())
        };
        let mut best: Vec<(&str, f64)> = Vec::new();
        for hit in hits.iter() {
            let table = table_of(hit);
            match best.iter_mut().find(|(t, _)| *t == table) {
                Some((_, score)) => *score = score.max(hit.score),
                None => best.push((table, hit.score)),
            }
        }
        let boost: Vec<(&str, f64)> = best
            .iter()
            .map(|(table, _)| {
                let neighbours = index.catalog.neighbours(table);
                let strongest = best
                    .iter()
                    .filter(|(other, _)| neighbours.contains(other))
                    .map(|(_, score)| *score)
                    .fold(0.0, f64::max);
                (*table, 0.15 * strongest)
            })
            .collect();
        let boosted = |hit: &Hit| {
            let table = table_of(hit);
            hit.score + boost.iter().find(|(t, _)| *t == table).map_or(0.0, |(_, b)| *b)
        };
        hits.sort_by(|a, b| boosted(b).total_cmp(&boosted(a)).then(a.doc.cmp(&b.doc)));
    }

    /// The candidates of `question` reordered both ways.
    fn both_orders(index: &SchemaIndex, question: &str, k: usize) -> (Vec<Hit>, Vec<Hit>) {
        let terms = tokenize(question);
        let weighted: Vec<(&str, f64)> =
            terms.iter().map(|t| (t.as_str(), question_weight(t))).collect();
        let (mut scratch, mut hits) = (Scratch::new(), Vec::new());
        index.bm25.top_k_weighted(&weighted, k, &mut scratch, &mut hits);
        let mut expected = hits.clone();
        by_name(index, &mut expected);
        index.favour_connected(&mut hits);
        (hits, expected)
    }

    #[test]
    fn numbered_tables_rank_as_tables_looked_up_by_name_on_pooled_spider() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spider");
        let tables = std::fs::read_to_string(format!("{root}/tables.json")).expect("tables");
        let databases = spider_databases(&tables).expect("valid");
        let index = index_from_generated_docs(
            pooled_catalog(&databases),
            "spider",
            RetrievalConfig::default(),
        );
        let questions = std::fs::read_to_string(format!("{root}/dev_open.json")).expect("dev");
        let questions: Vec<serde_json::Value> = serde_json::from_str(&questions).expect("json");
        let mut reordered = 0;
        for q in &questions {
            let question = q["question"].as_str().expect("a question");
            for k in [8, 40, 400] {
                let (got, expected) = both_orders(&index, question, k);
                assert_eq!(got, expected, "{question} k={k}");
                reordered += usize::from(got.windows(2).any(|w| w[0].score < w[1].score));
            }
        }
        assert!(reordered > 100, "foreign keys reorder many candidate lists: {reordered}");
    }

    fn table(name: &str, references: Option<&str>) -> TableInfo {
        let column = |name: &str| ColumnInfo {
            name: name.into(),
            declared_type: "TEXT".into(),
            nullable: true,
            comment: None,
            base_type: None,
        };
        TableInfo {
            name: name.into(),
            kind: TableKind::Table,
            columns: vec![column("id"), column("label")],
            primary_key: vec!["id".into()],
            foreign_keys: references
                .map(|target| ForeignKey {
                    columns: vec!["label".into()],
                    referenced_table: target.into(),
                    referenced_columns: vec!["id".into()],
                })
                .into_iter()
                .collect(),
            row_count: None,
            row_count_estimated: false,
            comment: None,
        }
    }

    #[test]
    fn docs_naming_tables_in_another_case_or_missing_from_the_catalog_rank_as_by_name() {
        // `Orders` is documented as `orders`; `archive` has docs but no table, and `Orders`
        // references it; `Lines` references `Orders`.
        let catalog = schemascope_core::Catalog {
            tables: vec![table("Orders", Some("archive")), table("Lines", Some("Orders"))],
        };
        let doc = |name: &str| {
            format!(
                "# Table: {name}\n\n## Purpose\n\nShipment label records for the warehouse.\n\n## Columns\n\n- label: the shipment label\n"
            )
        };
        let files = [("orders.md", doc("orders")), ("archive.md", doc("archive"))];
        let pairs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let (docs, _) = parse_docs(&pairs);
        let (index, _) =
            SchemaIndex::build(catalog, docs, &ColumnNotes::new(), RetrievalConfig::default());
        assert!(index.chunks.iter().any(|c| c.table == "archive"), "docs-only table chunked");
        for question in ["shipment label", "warehouse records", "label id"] {
            let (got, expected) = both_orders(&index, question, 50);
            assert!(got.len() >= 2, "{question}: {got:?}");
            assert_eq!(got, expected, "{question}");
        }
    }
}
