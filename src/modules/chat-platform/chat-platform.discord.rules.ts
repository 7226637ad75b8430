// The Discord side of the commands, as data: the slash commands built from the one command list
// (chat-platform.commands.rules.ts), an interaction's options read back as the command's
// arguments, and which channel ids are Discord's. Pure; discord.js is used for its types only.
import type {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { ArgType, CommandDefinition } from './chat-platform.commands.rules.js';

export type SlashCommand = RESTPostAPIChatInputApplicationCommandsJSONBody;

// Discord's numbers (API v10), written out so this file loads nothing of discord.js.
const CHAT_INPUT = 1 satisfies ApplicationCommandType.ChatInput;
const OPTION_TYPE = { string: 3, integer: 4, boolean: 5 } as const satisfies Record<
  ArgType,
  ApplicationCommandOptionType
>;

/** A slash-command option's name: Discord wants lowercase, so `proofUrl` is `proof_url`. */
export function optionName(argName: string): string {
  return argName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The slash command of a command definition (required options first, as Discord demands). */
export function slashCommand(def: CommandDefinition): SlashCommand {
  const ordered = [...def.args.filter((a) => a.required), ...def.args.filter((a) => !a.required)];
  return {
    type: CHAT_INPUT,
    name: def.name,
    description: def.description,
    options: ordered.map((a) => {
      const base = { name: optionName(a.name), description: a.description, required: a.required };
      switch (a.type) {
        case 'string':
          return {
            ...base,
            type: OPTION_TYPE.string,
            ...(a.choices ? { choices: a.choices.map((c) => ({ name: c, value: c })) } : {}),
          };
        case 'integer':
          return { ...base, type: OPTION_TYPE.integer };
        case 'boolean':
          return { ...base, type: OPTION_TYPE.boolean };
      }
    }),
  };
}

export interface InteractionOption {
  name: string;
  value?: string | number | boolean | undefined;
}

/** An interaction's options as the command's arguments, named as the command names them
 * (`proof_url` → `proofUrl`); an option no argument has keeps its name, so the command refuses it. */
export function interactionArgs(
  def: CommandDefinition,
  options: readonly InteractionOption[],
): Record<string, string | number | boolean> {
  const args: Record<string, string | number | boolean> = {};
  for (const o of options) {
    if (o.value === undefined) continue;
    const arg = def.args.find((a) => optionName(a.name) === o.name);
    args[arg ? arg.name : o.name] = o.value;
  }
  return args;
}

/** Discord ids are snowflakes: 17 to 20 digits. Instances naming other channels post nothing. */
export const isDiscordId = (id: string): boolean => /^\d{17,20}$/.test(id);

/** A message's text as the assistant reads it: the bot's own mentions (`<@id>`, and `<@!id>` as
 * older clients write them) taken out, since they address the bot rather than say anything, and
 * the spaces they leave folded; any other mention stays as written. */
export function messageText(content: string, botUserId: string): string {
  return content
    .replaceAll(`<@${botUserId}>`, ' ')
    .replaceAll(`<@!${botUserId}>`, ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}
