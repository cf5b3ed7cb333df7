//! Harbor with the runner: a suite exported as a Harbor job (`export`), the job started and
//! followed as a run (`run`: `skillwatch run --on harbor`), and job folders imported into the
//! history (`import`). The mapping itself is `core::harbor`; this is the I/O around it.

mod export;
mod import;
mod run;

pub use export::{ExportOptions, export_suite, write_export};
pub use import::{
    ImportOptions, JobError, JobImport, JobsImport, Unpaired, describe, read_job, read_jobs,
};
pub use run::{Harbor, HarborDone, default_dir, harbor_model, sigint_at_default};
pub use skillwatch_protocol::{HARBOR_VARS, HarborRun, HarborTarget};
