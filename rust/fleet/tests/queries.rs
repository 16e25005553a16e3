//! The standard queries' texts and their parameter substitution.

use hubble_fleet::queries::{find, render, QUERIES};

/// Every `{name}` placeholder in a query's text is a declared parameter and vice versa, and a
/// rendered text has none left.
#[test]
fn placeholders_are_exactly_the_declared_parameters() {
    for q in QUERIES {
        let mut found: Vec<&str> = q
            .sql
            .match_indices('{')
            .map(|(i, _)| {
                let end = q.sql[i..].find('}').expect("closed placeholder") + i;
                &q.sql[i + 1..end]
            })
            .collect();
        found.sort();
        found.dedup();
        let mut declared = q.params.to_vec();
        declared.sort();
        assert_eq!(found, declared, "{}", q.name);
        let values: Vec<(&str, &str)> = q.params.iter().map(|p| (*p, "v")).collect();
        let sql = render(&q, &values).unwrap();
        assert!(!sql.contains('{'), "{}: {sql}", q.name);
    }
}

#[test]
fn values_are_quoted_literals_that_cannot_end_early() {
    let q = find("growth").unwrap();
    let sql = render(&q, &[("base", "5.1"), ("head", "x' OR '1'='1")]).unwrap();
    assert!(sql.contains("IN ('5.1', 'x'' OR ''1''=''1')"), "{sql}");
}

#[test]
fn missing_and_unknown_parameters_are_errors() {
    let q = find("growth").unwrap();
    let err = render(&q, &[("base", "1")]).unwrap_err().to_string();
    assert_eq!(err, "`growth` needs --head");
    let q = find("top").unwrap();
    let err = render(&q, &[("base", "1")]).unwrap_err().to_string();
    assert_eq!(err, "`top` takes no parameter `base`");
}
