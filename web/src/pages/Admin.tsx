// Admin overview: API keys (the secret shown once), protocols (new ones made from a base;
// ground-floor ones marked immutable and never offered for editing) with the channel
// configuration, and the users. Each card reads its own data and keeps its own error; the parts
// live in ./admin/, with the pure rules in admin/protocols.ts. The other admin sections (scheduled
// tasks, the audit log) are pages of their own, framed by admin/AdminFrame.tsx.
import { ApiKeysCard } from './admin/ApiKeysCard';
import { ProtocolsCard } from './admin/ProtocolsCard';
import { UsersCard } from './admin/UsersCard';

export default function AdminOverview() {
  return (
    <>
      <ApiKeysCard />
      <ProtocolsCard />
      <UsersCard />
    </>
  );
}
