// The admin overview's reads, each through `useRead` and each its own card's: the users, the API
// keys and the protocols.
import { api } from '../../api/client';
import { useRead } from '../../lib/useRead';

export function useUsers() {
  return useRead('admin-users', async () => {
    const { data, error } = await api.GET('/api/admin/users', { params: { query: { limit: 200 } } });
    return { data: data?.users ?? [], error };
  });
}

export function useApiKeys() {
  return useRead('admin-api-keys', async () => {
    const { data, error } = await api.GET('/api/admin/api-keys');
    return { data: data?.apiKeys ?? [], error };
  });
}

export function useProtocols() {
  return useRead('protocols', async () => {
    const { data, error } = await api.GET('/api/protocol/protocols');
    return { data: data?.protocols ?? [], error };
  });
}
