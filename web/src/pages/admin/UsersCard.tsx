// The admin overview's users: name, email, role, account type, whether the email is verified.
import { Alert } from '../../ui';
import { useUsers } from './useAdminOverview';

export function UsersCard() {
  const users = useUsers();
  return (
    <div className="card">
      <h2>Users</h2>
      <Alert message={users.error} />
      <table tabIndex={0} aria-label="Users">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Account type</th>
            <th scope="col">Verified</th>
          </tr>
        </thead>
        <tbody>
          {(users.data ?? []).map((u) => (
            <tr key={u.id}>
              <td>{u.name}</td>
              <td>{u.email ?? '—'}</td>
              <td>{u.role}</td>
              <td>{u.accountType}</td>
              <td>{u.emailVerified ? 'yes' : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
