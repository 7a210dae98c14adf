//! Why an installation is in its state, worded: the one table of reason texts (en and zh),
//! beside the agent protocol's codes (`apps::Reason`). The agent sends codes with their figures,
//! never prose (docs/api.md §Apps over time); the market words them for the reader
//! (`apps::access`, in the request's language), the agent in English for its logs and its
//! acknowledgements' `error`. Both programs word from this one table, so the two cannot drift;
//! the language is the market's `Lang` (an HTTP extractor, so it stays in the market), passed here
//! as whether it is Chinese.

use crate::apps::{Reason, ReasonCode};

/// Why an installation is in its state, in Chinese when `zh`, else in English, with its figures
/// (the agent sends codes, never prose: docs/api.md §Apps over time).
pub fn reason_text(r: &Reason, zh: bool) -> String {
    use ReasonCode as C;
    let exit = r.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "?".into());
    let image = r.image.clone().unwrap_or_default();
    let mut text = match r.code {
        C::Exited if zh => format!("应用已退出（退出码 {exit}）"),
        C::Exited => format!("The app exited (exit code {exit})"),
        C::KeepsExiting if zh => format!("应用反复退出（退出码 {exit}）"),
        C::KeepsExiting => format!("The app keeps exiting (exit code {exit})"),
        C::ContainerGone if zh => "应用的容器已不存在".into(),
        C::ContainerGone => "The app's container is gone".into(),
        C::ImageMissing if zh => format!("设备上没有镜像 {image}，且无法获取"),
        C::ImageMissing => format!("The image {image} is not on the device and could not be fetched"),
        C::ArchiveFailed if zh => "无法下载或载入市场提供的镜像包".into(),
        C::ArchiveFailed => "The market's image archive could not be downloaded or loaded".into(),
        C::DockerUnavailable if zh => "此设备上没有可用的 Docker".into(),
        C::DockerUnavailable => "Docker is not available on this device".into(),
        C::DockerError if zh => format!("Docker 拒绝了请求（状态 {}）", r.status.unwrap_or(0)),
        C::DockerError => format!("Docker refused (status {})", r.status.unwrap_or(0)),
        C::PortInUse if zh => format!("设备上的端口 {} 已被占用", r.port.unwrap_or(0)),
        C::PortInUse => format!("Port {} is already in use on the device", r.port.unwrap_or(0)),
        C::NoSpace if zh => "设备磁盘空间不足".into(),
        C::NoSpace => "The device is out of disk space".into(),
        C::NoGpuRuntime if zh => "应用需要 GPU，但设备的 Docker 没有 NVIDIA 运行时".into(),
        C::NoGpuRuntime => "The app needs GPUs and the device's Docker has no NVIDIA runtime".into(),
        C::HealthFailed if zh => format!("应用在 {} 秒内未通过健康检查", r.secs.unwrap_or(0)),
        C::HealthFailed => format!("The app did not pass its health check within {} seconds", r.secs.unwrap_or(0)),
        C::RolledBack if zh => format!("更新到 {} 失败，已恢复为之前的版本", r.version.as_deref().unwrap_or("?")),
        C::RolledBack => format!("Updating to {} failed; the previous version runs again", r.version.as_deref().unwrap_or("?")),
        C::GpuGone if zh => "此应用占用的 GPU 已不在设备上".into(),
        C::GpuGone => "A GPU this app holds is no longer on the device".into(),
        C::DeviceOffline if zh => "设备离线".into(),
        C::DeviceOffline => "The device is offline".into(),
        C::TimedOut => {
            let secs = r.secs.unwrap_or(0);
            let (n, en, zh_unit) = if secs < 120 { (secs, "seconds", "秒") } else { (secs.div_ceil(60), "minutes", "分钟") };
            let state = r.state.map(|s| if zh { s.words().1 } else { s.words().0 }).unwrap_or_default();
            if zh { format!("设备未在 {n} {zh_unit}内完成（{state}）") } else { format!("The device did not finish ({state}) within {n} {en}") }
        }
        C::Cancelled if zh => "设备离线时已取消".into(),
        C::Cancelled => "Cancelled while the device was offline".into(),
        C::Storage if zh => "无法创建或删除应用的数据目录".into(),
        C::Storage => "The app's data folders could not be made or removed".into(),
        C::ChecksumMismatch if zh => "快照文件校验失败（sha256 不符），重试后仍然失败".into(),
        C::ChecksumMismatch => "The snapshot's archive did not match its sha256, again after a retry".into(),
        C::SnapshotMissing if zh => "设备上已没有这个快照的文件".into(),
        C::SnapshotMissing => "The snapshot's archive is no longer on the device".into(),
        C::Other if zh => "设备报告了一个错误".into(),
        C::Other => "The device reported an error".into(),
    };
    if let Some(c) = &r.cause {
        text.push_str(if zh { "：" } else { ": " });
        text.push_str(&reason_text(c, zh));
    }
    if let Some(d) = r.detail.as_deref().filter(|d| !d.is_empty()) {
        text.push_str(if zh { "（" } else { " (" });
        text.push_str(d);
        text.push_str(if zh { "）" } else { ")" });
    }
    text
}

/// In English (logs, and an acknowledgement's `error`).
impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&reason_text(self, false))
    }
}
