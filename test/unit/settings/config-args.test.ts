import { describe, expect, it } from 'vitest';
import { parseSetArgs } from '../../../src/cli/actions/config.js';

describe('osm config set argument forms', () => {
  it.each([
    [['server.port', ['9000']], ['server.port', '9000']],
    [['server.port=9000', []], ['server.port', '9000']],
    [['server.port', ['=', '9000']], ['server.port', '9000']],
    [['server.port=', ['9000']], ['server.port', '9000']],
    [['server.port', ['=9000']], ['server.port', '9000']],
    [['llm_config.system_prompt', ['be', 'brief']], ['llm_config.system_prompt', 'be brief']],
    [['server.license=a=b', []], ['server.license', 'a=b']],
    [['server.license=', []], ['server.license', '']],
  ] as const)('%j → %j', ([key, values], want) => {
    expect(parseSetArgs(key, [...values])).toEqual(want);
  });

  it('a key without value is an error', () => {
    expect(() => parseSetArgs('server.port', [])).toThrow(/missing value/);
  });
});
