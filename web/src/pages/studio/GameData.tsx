// The game's data: the quests (with their objectives, the steps a player goes through), the item
// catalogue, and one player's inventory, relationships and quest progress, edited where the API
// allows. The player chosen is in the address (`?player=<id>`).
import { ItemsCard } from './ItemsCard';
import { PlayerCard } from './PlayerCard';
import { QuestsCard } from './QuestsCard';

export default function GameData() {
  return (
    <>
      <div className="studio-columns">
        <QuestsCard />
        <ItemsCard />
      </div>
      <PlayerCard />
    </>
  );
}
