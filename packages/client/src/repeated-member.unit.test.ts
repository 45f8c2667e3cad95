import { describe, expect, it } from 'vitest';
import { firstRepeatedMember } from './repeated-member.ts';

describe('a member named twice in one object of a JSON text', () => {
  it('is found at any depth, in objects inside arrays, and compared decoded', () => {
    expect(firstRepeatedMember('{"a":1,"a":2}')).toBe('a');
    expect(firstRepeatedMember('{"events":[{"x":1},{"note":"n","note":"m"}]}')).toBe('note');
    expect(firstRepeatedMember('{"outer":{"inner":{"k":1,"\\u006b":2}}}')).toBe('k');
    expect(firstRepeatedMember('[1,{"b":{},"b":[]}]')).toBe('b');
  });

  it('is not a name said again in another object, a value equal to a name, or text inside strings', () => {
    expect(firstRepeatedMember('{"a":{"a":1},"b":{"a":2}}')).toBeUndefined();
    expect(firstRepeatedMember('{"a":"a","b":["a","a"]}')).toBeUndefined();
    expect(firstRepeatedMember('{"a":"x\\",\\"a\\":","b":"{\\"c\\":1,\\"c\\":2}"}')).toBeUndefined();
    expect(firstRepeatedMember('{ "a" : 1 , "b" : [ { } , [ ] ] }')).toBeUndefined();
    expect(firstRepeatedMember('"a"')).toBeUndefined();
  });
});
