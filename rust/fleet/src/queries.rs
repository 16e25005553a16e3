//! The standard fleet questions, one SQL text each (`rust/fleet/sql/*.sql`). The same text runs
//! on the embedded engine, on Spark and on DuckDB (`tests/fleet/crosscheck.py` requires equal
//! results): only ANSI constructs every one of them has (CTEs, joins, `ROW_NUMBER() OVER`,
//! `CAST(… AS DOUBLE)`), and parameters are substituted as quoted string literals.

use crate::{FleetError, Result};

/// A standard question.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    /// Its name (the `hubble fleet` subcommand and the file name).
    pub name: &'static str,
    /// What it answers.
    pub about: &'static str,
    /// Parameter names, in `{name}` placeholders.
    pub params: &'static [&'static str],
    /// The SQL text.
    pub sql: &'static str,
}

/// Every standard question.
pub const QUERIES: [Query; 4] = [
    Query {
        name: "top",
        about: "top methods by self time, per app version and anomaly reason",
        params: &[],
        sql: include_str!("../sql/top.sql"),
    },
    Query {
        name: "growth",
        about: "methods whose share of jank self time grew most from version {base} to {head}",
        params: &["base", "head"],
        sql: include_str!("../sql/growth.sql"),
    },
    Query {
        name: "anomalies",
        about: "anomalies (flushed traces) by device model and reason",
        params: &[],
        sql: include_str!("../sql/anomalies.sql"),
    },
    Query {
        name: "signatures",
        about: "matched signatures by device model, from uploaded summaries",
        params: &[],
        sql: include_str!("../sql/signatures.sql"),
    },
];

/// The query named `name`.
pub fn find(name: &str) -> Option<Query> {
    QUERIES.into_iter().find(|q| q.name == name)
}

/// `query`'s SQL with its parameters substituted as SQL string literals (quotes doubled, so a
/// value cannot end the literal). Every parameter must be given exactly once.
pub fn render(query: &Query, values: &[(&str, &str)]) -> Result<String> {
    let mut sql = query.sql.to_string();
    for p in query.params {
        let value = values
            .iter()
            .find(|(k, _)| k == p)
            .map(|(_, v)| *v)
            .ok_or_else(|| FleetError::Parameter(format!("`{}` needs --{p}", query.name)))?;
        let literal = format!("'{}'", value.replace('\'', "''"));
        sql = sql.replace(&format!("{{{p}}}"), &literal);
    }
    if let Some((k, _)) = values.iter().find(|(k, _)| !query.params.contains(k)) {
        return Err(FleetError::Parameter(format!(
            "`{}` takes no parameter `{k}`",
            query.name
        )));
    }
    Ok(sql)
}
