/** Streaming importers of tool output (httpx, nuclei, generic JSONL) and the asset/vulnerability diffs. */
export { importAssetsJsonl, importVulnsJsonl, importCustomAssetsJsonl, runSync, httpxKind, nucleiKind, customKind, type FileImportOptions } from './jsonl.js';
export { AsyncRecordImporter, RecordImporter, asAsyncStore, type ImportStats, type ImportOptions, type ImportKind, type ImportStore } from './importer.js';
export { httpxToAsset, assetRecordToInput, looksLikeHttpx } from './httpx.js';
export { nucleiToVuln, vulnRecordToInput, isNucleiRecord } from './nuclei.js';
export { customToAsset } from './custom.js';
export { classifyAsset } from './classify.js';
export { computeAssetDiff, computeVulnDiff, type AssetDiff, type VulnDiff } from './diff.js';
export { importToolFile, importToolFileSync, type ToolImporter, type ToolImportStats, type ToolImportOptions } from './tool-import.js';
export { TOOL_IMPORTERS, toolImporter, toolNames } from './tools.js';
