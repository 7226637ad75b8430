import type { CreatedAt, Generated } from '../../platform/db/schema.js';

export interface UploadContextsTable {
  id: string;
  user_id: number;
  created_at: CreatedAt;
}

export interface UploadedFilesTable {
  id: Generated<number>;
  upload_context_id: string;
  position: number;
  name: string;
  mime_type: string;
  size: number;
  data: Buffer;
  created_at: CreatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    upload_contexts: UploadContextsTable;
    uploaded_files: UploadedFilesTable;
  }
}
