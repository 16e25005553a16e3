//! Parquet files of the fleet layout: `<root>/<table>/<part>.parquet`, each written under a
//! temporary name and renamed when complete, so an engine scanning the directory never reads a
//! half-written file.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::schema::{Table, SCHEMA_VERSION, TABLE_KEY, VERSION_KEY};
use crate::{FleetError, Result};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FleetError + '_ {
    move |source| FleetError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn pq(path: &Path) -> impl FnOnce(parquet::errors::ParquetError) -> FleetError + '_ {
    move |source| FleetError::Parquet {
        path: path.display().to_string(),
        source,
    }
}

/// Where a table's part goes.
pub fn part_path(root: &Path, table: Table, part: &str) -> PathBuf {
    root.join(table.name()).join(format!("{part}.parquet"))
}

/// Writes `batch` as `<root>/<table>/<part>.parquet` (Snappy, the table and schema version in
/// the key-value metadata). Returns the path.
pub fn write_part(root: &Path, table: Table, part: &str, batch: &RecordBatch) -> Result<PathBuf> {
    if batch.schema() != table.schema() {
        return Err(FleetError::Schema {
            path: part_path(root, table, part).display().to_string(),
            problem: format!("the batch is not a `{}` table", table.name()),
        });
    }
    let dir = root.join(table.name());
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let path = part_path(root, table, part);
    let tmp = dir.join(format!(".{part}.parquet.tmp"));
    let result = (|| {
        let file = File::create(&tmp).map_err(io(&tmp))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(vec![
                parquet::file::metadata::KeyValue::new(TABLE_KEY.into(), table.name().to_string()),
                parquet::file::metadata::KeyValue::new(
                    VERSION_KEY.into(),
                    SCHEMA_VERSION.to_string(),
                ),
            ]))
            .build();
        let mut writer =
            ArrowWriter::try_new(file, table.schema(), Some(props)).map_err(pq(&tmp))?;
        writer.write(batch).map_err(pq(&tmp))?;
        let mut file = writer.into_inner().map_err(pq(&tmp))?;
        file.flush().map_err(io(&tmp))?;
        file.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| path)
}

/// Which table a Parquet file holds, refusing a file that is not ours or of another schema
/// version (with the version it has and the one this tool reads).
pub fn check_part(path: &Path) -> Result<Table> {
    let file = File::open(path).map_err(io(path))?;
    let reader = SerializedFileReader::new(file).map_err(pq(path))?;
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default();
    let get = |key: &str| {
        kv.iter()
            .find(|e| e.key == key)
            .and_then(|e| e.value.clone())
    };
    let schema_error = |problem: String| FleetError::Schema {
        path: path.display().to_string(),
        problem,
    };
    let table = get(TABLE_KEY)
        .ok_or_else(|| schema_error(format!("not a Hubble fleet table (no `{TABLE_KEY}`)")))?;
    let table = Table::from_name(&table)
        .ok_or_else(|| schema_error(format!("unknown Hubble table `{table}`")))?;
    let version = get(VERSION_KEY).unwrap_or_default();
    if version != SCHEMA_VERSION.to_string() {
        return Err(schema_error(format!(
            "`{}` table of schema version {}; this tool reads version {SCHEMA_VERSION} \
             (export the traces again with this hubble)",
            table.name(),
            if version.is_empty() { "?" } else { &version }
        )));
    }
    Ok(table)
}

/// Reads a part back (tests, and `hubble fleet` on engines that take batches).
pub fn read_part(path: &Path) -> Result<(Table, Vec<RecordBatch>)> {
    let table = check_part(path)?;
    let file = File::open(path).map_err(io(path))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(pq(path))?
        .build()
        .map_err(pq(path))?;
    let batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(FleetError::Arrow)?;
    Ok((table, batches))
}
