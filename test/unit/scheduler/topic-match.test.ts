import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { globToRegExp, topicMatches } from '../../../src/scheduler/topic-match.js';

describe('topicMatches', () => {
  it('matches everything with an empty pattern', () => {
    expect(topicMatches('', 'anything')).toBe(true);
    expect(topicMatches(undefined, 'run.completed')).toBe(true);
  });

  it('compares exactly without glob characters', () => {
    expect(topicMatches('assets.new', 'assets.new')).toBe(true);
    expect(topicMatches('assets.new', 'assets.newer')).toBe(false);
    // "." is not a wildcard
    expect(topicMatches('a.b', 'axb')).toBe(false);
  });

  it('supports *, ?, classes, negation, ranges and escapes like path.Match', () => {
    expect(topicMatches('assets.*', 'assets.new')).toBe(true);
    expect(topicMatches('assets.*', 'assets.')).toBe(true);
    expect(topicMatches('assets.*', 'asset.new')).toBe(false);
    expect(topicMatches('assets.*', 'assets.new/x')).toBe(false);
    expect(topicMatches('*', 'run.completed')).toBe(true);
    expect(topicMatches('run.?ailed', 'run.failed')).toBe(true);
    expect(topicMatches('run.?ailed', 'run.ffailed')).toBe(false);
    expect(topicMatches('step.[cf]*', 'step.completed')).toBe(true);
    expect(topicMatches('step.[cf]*', 'step.skipped')).toBe(false);
    expect(topicMatches('step.[!c]*', 'step.failed')).toBe(true);
    expect(topicMatches('step.[^c]*', 'step.completed')).toBe(false);
    expect(topicMatches('v[0-9]', 'v7')).toBe(true);
    expect(topicMatches('v[0-9]', 'vx')).toBe(false);
    expect(topicMatches('a\\*', 'a*')).toBe(true);
    expect(topicMatches('a\\*', 'ab')).toBe(false);
    expect(topicMatches('a.b*', 'axbc')).toBe(false);
  });

  it('treats malformed patterns as matching nothing', () => {
    expect(globToRegExp('[abc')).toBeNull();
    expect(topicMatches('assets.[abc', 'assets.a')).toBe(false);
    expect(topicMatches('x\\', 'x')).toBe(false);
    expect(topicMatches('[z-a]', 'm')).toBe(false);
  });

  it('property: a literal topic matches itself and * matches any slash-free topic', () => {
    const topic = fc.string({ maxLength: 30 }).filter((s) => !/[*?[\\]/.test(s) && s === s.trim());
    fc.assert(fc.property(topic, (t) => topicMatches(t, t)));
    fc.assert(fc.property(topic.filter((s) => !s.includes('/')), (t) => topicMatches('*', t)));
    fc.assert(fc.property(topic, fc.string({ maxLength: 10 }), (prefix, rest) => {
      const p = prefix.trim();
      if (p === '' || rest.includes('/')) return true;
      return topicMatches(`${p}*`, `${p}${rest}`);
    }));
  });
});
