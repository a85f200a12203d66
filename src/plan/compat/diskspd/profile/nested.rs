//! The profile elements with children or attributes, each read into the one switch
//! it stands for: `<Affinity>` → `-a…`, `<Distribution>` → `-rd…`,
//! `<WriteBufferContent>` → `-Z…`, `<Throughput unit>` → `-g…`, `<ETW>` → `-e`.

use roxmltree::Node;

use super::{children, number_text, Reader};
use crate::plan::compat::CompatError;

/// The `<ETW>` providers (each a boolean); any one on is diskspd's `-e`.
const ETW: &[&str] = &[
    "Process",
    "Thread",
    "ImageLoad",
    "DiskIO",
    "MemoryPageFaults",
    "MemoryHardFaults",
    "Network",
    "Registry",
    "UsePagedMemory",
    "UsePerfTimer",
    "UseSystemTimer",
    "UseCyclesCounter",
];

impl<'d> Reader<'_, 'd> {
    /// The switch a nested element stands for (`None`: diskspd's default).
    pub(super) fn nested(
        &self,
        node: Node<'_, 'd>,
        name: &str,
    ) -> Result<Option<String>, CompatError> {
        match name {
            "Affinity" => self.affinity(node).map(Some),
            "Distribution" => self.distribution(node).map(Some),
            "WriteBufferContent" => self.write_content(node),
            "Throughput" => self.throughput(node),
            _ => self.etw(node),
        }
    }

    /// `<ETW><DiskIO>true</DiskIO>…`: event tracing, `-e`.
    fn etw(&self, node: Node<'_, 'd>) -> Result<Option<String>, CompatError> {
        let mut on = false;
        for c in children(node) {
            if !ETW.contains(&c.tag_name().name()) {
                return Err(self.unknown(c, "ETW"));
            }
            on |= self.boolean(c)?;
        }
        Ok(on.then(|| "-e".to_string()))
    }

    /// `<AffinityAssignment>n` (group 0) and `<AffinityGroupAssignment Group Processor/>`
    /// in order, as `-a` writes them: `-ag1,2,g0,3`.
    fn affinity(&self, node: Node<'_, 'd>) -> Result<String, CompatError> {
        let mut parts = Vec::new();
        let mut group = 0;
        for c in children(node) {
            let (g, cpu) = match c.tag_name().name() {
                "AffinityAssignment" => (0, self.number(c)?),
                "AffinityGroupAssignment" => (
                    self.attr_number(c, "Group", true)?.unwrap_or(0),
                    self.attr_number(c, "Processor", false)?.unwrap_or(0),
                ),
                _ => return Err(self.unknown(c, "Affinity")),
            };
            if g != group {
                parts.push(format!("g{g}"));
                group = g;
            }
            parts.push(cpu.to_string());
        }
        if parts.is_empty() {
            return Err(self.loc(node).error("<Affinity> assigns no CPU"));
        }
        Ok(format!("-a{}", parts.join(",")))
    }

    /// `<Percent>` or `<Absolute>`, each of `<Range IO="pct">span</Range>`.
    fn distribution(&self, node: Node<'_, 'd>) -> Result<String, CompatError> {
        let kinds: Vec<Node> = children(node).collect();
        let [kind] = kinds[..] else {
            return Err(self
                .loc(node)
                .error("<Distribution> holds one <Percent> or one <Absolute>"));
        };
        let form = match kind.tag_name().name() {
            "Percent" => "pct",
            "Absolute" => "abs",
            _ => return Err(self.unknown(kind, "Distribution")),
        };
        let mut ranges = Vec::new();
        for r in children(kind) {
            if r.tag_name().name() != "Range" {
                return Err(self.unknown(r, kind.tag_name().name()));
            }
            let io = self.attr_number(r, "IO", true)?.unwrap_or(0);
            ranges.push(format!("{io}/{}", self.number(r)?));
        }
        if ranges.is_empty() {
            return Err(self
                .loc(kind)
                .error("a distribution needs at least one <Range>"));
        }
        Ok(format!("-rd{form}{}", ranges.join(":")))
    }

    /// `<Pattern>sequential|zero|random</Pattern>`, random with
    /// `<RandomDataSource><SizeInBytes>n</SizeInBytes>[<FilePath>…]`.
    fn write_content(&self, node: Node<'_, 'd>) -> Result<Option<String>, CompatError> {
        let (mut pattern, mut source) = (None, None);
        for c in children(node) {
            match c.tag_name().name() {
                "Pattern" => pattern = Some((self.text(c)?, c)),
                "RandomDataSource" => source = Some(c),
                _ => return Err(self.unknown(c, "WriteBufferContent")),
            }
        }
        let Some((pattern, at)) = pattern else {
            return Err(self
                .loc(node)
                .error("<WriteBufferContent> needs a <Pattern>"));
        };
        match (pattern, source) {
            ("sequential", None) => Ok(None),
            ("zero", None) => Ok(Some("-Z".into())),
            ("random", Some(src)) => self.random_source(src).map(Some),
            ("random", None) => Err(self.loc(at).error(
                "<Pattern>random without <RandomDataSource>: diskspd then writes its \
                 default (sequential) content; say sequential, or give the source's \
                 <SizeInBytes>",
            )),
            ("sequential" | "zero", Some(src)) => Err(self.loc(src).error(format!(
                "<RandomDataSource> goes with <Pattern>random, not {pattern}"
            ))),
            _ => Err(self.loc(at).error(format!(
                "<Pattern>{pattern}: diskspd takes sequential, zero or random"
            ))),
        }
    }

    fn random_source(&self, node: Node<'_, 'd>) -> Result<String, CompatError> {
        let (mut size, mut file) = (None, None);
        for c in children(node) {
            match c.tag_name().name() {
                "SizeInBytes" => size = Some(self.number(c)?),
                "FilePath" => file = Some(self.text(c)?),
                _ => return Err(self.unknown(c, "RandomDataSource")),
            }
        }
        let size = size.ok_or_else(|| {
            self.loc(node)
                .error("<RandomDataSource> needs its <SizeInBytes>")
        })?;
        Ok(match file {
            Some(f) => format!("-Z{size},{f}"),
            None => format!("-Z{size}"),
        })
    }

    /// `<Throughput unit="IOPS|BPMS">n</Throughput>` (bytes per ms by default; 0 none).
    fn throughput(&self, node: Node<'_, 'd>) -> Result<Option<String>, CompatError> {
        let n = self.number(node)?;
        let suffix = match node.attribute("unit") {
            None | Some("BPMS") => "",
            Some("IOPS") => "i",
            Some(u) => {
                return Err(self.loc(node).error(format!(
                    "unit=\"{u}\": diskspd's throughput units are IOPS and BPMS"
                )))
            }
        };
        Ok((n > 0).then(|| format!("-g{n}{suffix}")))
    }

    /// The number in attribute `name`; `required` makes a missing one an error.
    fn attr_number(
        &self,
        node: Node,
        name: &str,
        required: bool,
    ) -> Result<Option<u64>, CompatError> {
        match node.attribute(name) {
            None if required => Err(self.loc(node).error(format!(
                "<{}> needs its {name}=\"…\"",
                node.tag_name().name()
            ))),
            None => Ok(None),
            Some(v) => number_text(v.trim()).map(Some).ok_or_else(|| {
                self.loc(node)
                    .error(format!("{name}=\"{v}\": diskspd takes a whole number"))
            }),
        }
    }

    fn unknown(&self, node: Node, parent: &str) -> CompatError {
        self.loc(node).error(format!(
            "<{}> is no element of <{parent}> in diskspd's profile schema",
            node.tag_name().name()
        ))
    }
}
