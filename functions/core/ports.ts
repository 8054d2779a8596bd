/**
 * Temporary re-export of the ports' new places, each in its area, kept until every importer names the area
 * modules (then deleted).
 */
export type {
  ClientAttemptReservation,
  ClientFailureStore,
  HashSlot,
  IdentityProvider,
  VerificationGate,
  VerificationPass,
} from './access/ports.js';
export type {
  ActiveDeployment,
  DeploymentChangedEvent,
  DeploymentEvent,
  DeploymentHistoryEntry,
  DeploymentSlot,
  DeploymentStatusChangedEvent,
  DeviceSlot,
  DeviceStatus,
  DeviceStatusHistoryEntry,
  HistoryEntry,
  UndeployMark,
} from './deployments/model.js';
export type { DeploymentRepository, EventPublisher } from './deployments/ports.js';
export type {
  DeviceRepository,
  DeviceStaticFields,
  DeviceTokenClaims,
  DeviceTokenSigner,
  DisconnectOutcome,
  OverduePresence,
  PresenceRepository,
} from './devices/ports.js';
export type {
  RolloutChunk,
  RolloutReport,
  RolloutWaveTally,
  RolloutWorkMessage,
  StoredRollout,
  StoredRolloutWave,
} from './rollouts/model.js';
export type { RolloutRepository, WorkQueue } from './rollouts/ports.js';
export type {
  RecordVersionGuards,
  RecordVersionOutcome,
  ScenarioSummary,
  ScenarioVersion,
  StagedArchive,
  UploadSlot,
  UploadSlotStatus,
} from './scenarios/model.js';
export type { ArchiveStore, RandomAccessSource, ScenarioCatalog, ScenarioRepository, UploadSlotRepository } from './scenarios/ports.js';
export type { SearchIndex } from './search/ports.js';
export type { Company, CompanyRepository } from './shared/companies.js';
export type { Page } from './shared/paging.js';
