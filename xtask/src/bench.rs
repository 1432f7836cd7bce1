pub async fn address(_n: usize) -> anyhow::Result<()> { anyhow::bail!("not yet") }
