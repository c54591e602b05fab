# EXP tactical-combat kernels for Cython: "exp.attack" (word layout: docs/exp.md).
# Included at the end of _cy.pyx (it uses _min, _max and KILODIE from there); the reference is
# combatsim.exp.reference.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from rng cimport (DOMAIN_DENSE, Stream, Words, block, pick as pick_word, rejection_threshold, stream_die,
                 stream_retry_word, stream_start)


cdef extern from "attack_count.h" nogil:
    # The joint-die fast path over whole dense blocks, twelve at a time (AVX2 where the CPU has
    # it); exact, rejected words included.
    int64_t attack_count(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, uint64_t kilodie_bar,
                         uint64_t sides1, uint64_t sides2, uint64_t sides3, int64_t base, uint32_t threshold,
                         int64_t* damage)

cdef enum:
    ROUNDS_PER_BURST = 3
    # Damage dice the joint-die fast path covers.
    FAST_DICE = 3

# The most faces a joint die may have (reference.JOINT_FACES_LIMIT).
cdef uint64_t JOINT_FACES_LIMIT = (<uint64_t>1) << 31

# The cap a critical natural 1000 uses instead of MR (above any to-hit).
cdef int64_t NO_CAP = (<int64_t>1) << 60


ctypedef struct Fired:
    int64_t hits
    int64_t damage
    int64_t rounds_hit


cdef inline int64_t _dice(Stream* stream, int64_t count, uint32_t sides, uint32_t threshold) noexcept nogil:
    cdef int64_t total = 0, j
    for j in range(count):
        total += stream_die(stream, sides, threshold)
    return total


cdef inline Fired _fire_unit(Stream* stream, int64_t bonus, int64_t maximum_roll, int64_t armour_rating,
                             int64_t adjustment, int64_t dice_count, uint32_t dice_sides, uint32_t dice_threshold,
                             int64_t dice_modifier, int64_t damage_adjustment, int64_t rolls, bint automatic,
                             bint hit_on_equal, bint critical, uint32_t kilodie_threshold) noexcept nogil:
    # One unit of fire from the item stream: reference.fire_unit.
    cdef int64_t penalty = _min(adjustment, 0)
    cdef int64_t boost = _max(adjustment, 0)
    cdef int64_t hit_bar = armour_rating - hit_on_equal  # a hit: to-hit > hit_bar
    cdef int64_t offset = dice_modifier + damage_adjustment
    cdef int64_t r, round_number, roll, cap, hit, landed, dealt
    cdef Fired out
    out.hits = 0
    out.damage = 0
    out.rounds_hit = 0
    for r in range(rolls):
        roll = stream_die(stream, KILODIE, kilodie_threshold)
        cap = NO_CAP if (critical and roll == KILODIE) else maximum_roll
        hit = _min(roll + bonus + penalty, cap) + boost > hit_bar
        if automatic:
            landed = stream_die(stream, ROUNDS_PER_BURST + 1, 0) - 1
            for round_number in range(ROUNDS_PER_BURST):
                dealt = _max(_dice(stream, dice_count, dice_sides, dice_threshold) + offset, 0)
                out.damage += dealt * hit * (round_number < landed)
            out.rounds_hit += landed * hit
        else:
            dealt = _max(_dice(stream, dice_count, dice_sides, dice_threshold) + offset, 0)
            out.damage += dealt * hit
            out.rounds_hit += hit
        out.hits += hit
    return out


cdef inline uint64_t _kilodie_bar(int64_t bonus, int64_t maximum_roll, int64_t armour_rating, int64_t adjustment,
                                  bint hit_on_equal, bint critical) noexcept nogil:
    # The least 0-based kilodie value that hits, as a product bar (<< 32); above all if none.
    cdef int64_t penalty = _min(adjustment, 0)
    cdef int64_t boost = _max(adjustment, 0)
    cdef int64_t hit_bar = armour_rating - hit_on_equal
    cdef int64_t v_min = hit_bar - bonus - penalty - boost + 1
    cdef int64_t u_min
    if maximum_roll + boost > hit_bar:
        u_min = _min(_max(v_min - 1, 0), KILODIE)
    elif critical and v_min <= KILODIE:
        u_min = KILODIE - 1
    else:
        u_min = KILODIE
    return (<uint64_t>u_min) << 32


cdef inline uint64_t _joint_faces(int64_t rolls, bint automatic, int64_t dice_count,
                                  uint64_t dice_sides) noexcept nogil:
    # reference.joint_faces: 1000 * sides ** dice for a single roll that fits, else 0.
    cdef uint64_t faces = KILODIE
    cdef int64_t j
    if rolls != 1 or automatic:
        return 0
    for j in range(dice_count):
        faces *= dice_sides
        if faces > JOINT_FACES_LIMIT:
            return 0
    return faces


cdef inline Fired _fire_joint(Stream* stream, uint64_t seed, uint64_t index, uint64_t faces, uint32_t threshold,
                              int64_t bonus, int64_t maximum_roll, int64_t armour_rating, int64_t adjustment,
                              int64_t dice_count, uint64_t dice_sides, int64_t dice_modifier,
                              int64_t damage_adjustment, bint hit_on_equal, bint critical) noexcept nogil:
    # One roll from the unit's joint die (reference.fire_joint): the accepted word's digits come
    # from a chain of multiplies, most significant first (attack_count.h), no division.
    cdef Words words = block(<uint32_t>seed, <uint32_t>(seed >> 32), index >> 2, 0, DOMAIN_DENSE)
    cdef uint32_t word = pick_word(words, index & 3)
    cdef uint64_t product
    cdef int64_t j, roll, cap, hit, dice = dice_count
    cdef Fired out
    stream_start(stream, seed, index)
    while <uint32_t>(<uint64_t>word * faces) < threshold:
        word = stream_retry_word(stream)
    product = <uint64_t>word * KILODIE
    roll = <int64_t>(product >> 32) + 1
    for j in range(dice_count):
        product = (product & 0xFFFFFFFFu) * dice_sides
        dice += <int64_t>(product >> 32)
    cap = NO_CAP if (critical and roll == KILODIE) else maximum_roll
    hit = _min(roll + bonus + _min(adjustment, 0), cap) + _max(adjustment, 0) > armour_rating - hit_on_equal
    out.hits = hit
    out.damage = hit * _max(dice + dice_modifier + damage_adjustment, 0)
    out.rounds_hit = hit
    return out


cdef Fired _joint_units(uint64_t seed, int64_t first, int64_t last, uint64_t faces, int64_t bonus,
                        int64_t maximum_roll, int64_t armour_rating, int64_t adjustment, int64_t dice_count,
                        uint64_t dice_sides, int64_t dice_modifier, int64_t damage_adjustment, bint hit_on_equal,
                        bint critical) noexcept nogil:
    # Units first .. last - 1 of one weapon, each from its joint die.
    cdef uint32_t threshold = rejection_threshold(<uint32_t>faces)
    cdef Stream stream
    cdef Fired one, out
    cdef int64_t k
    out.hits = 0
    out.damage = 0
    out.rounds_hit = 0
    for k in range(first, last):
        one = _fire_joint(&stream, seed, <uint64_t>k, faces, threshold, bonus, maximum_roll, armour_rating,
                          adjustment, dice_count, dice_sides, dice_modifier, damage_adjustment, hit_on_equal,
                          critical)
        out.hits += one.hits
        out.damage += one.damage
    return out


cdef inline Fired _fire_item(Stream* stream, uint64_t seed, uint64_t index, uint64_t faces, uint32_t joint_threshold,
                             int64_t bonus, int64_t maximum_roll, int64_t armour_rating, int64_t adjustment,
                             int64_t dice_count, uint32_t dice_sides, uint32_t dice_threshold, int64_t dice_modifier,
                             int64_t damage_adjustment, int64_t rolls, bint automatic, bint hit_on_equal,
                             bint critical, uint32_t kilodie_threshold) noexcept nogil:
    # Unit of fire ``index``: its joint die when it has one (faces > 0), else its item stream.
    if faces:
        return _fire_joint(stream, seed, index, faces, joint_threshold, bonus, maximum_roll, armour_rating,
                           adjustment, dice_count, dice_sides, dice_modifier, damage_adjustment, hit_on_equal,
                           critical)
    stream_start(stream, seed, index)
    return _fire_unit(stream, bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides,
                      dice_threshold, dice_modifier, damage_adjustment, rolls, automatic, hit_on_equal, critical,
                      kilodie_threshold)


def attack(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] bonus,
           const int64_t[::1] maximum_roll, const int64_t[::1] armour_rating, const int64_t[::1] adjustment,
           const int64_t[::1] dice_count, const int64_t[::1] dice_sides, const int64_t[::1] dice_modifier,
           const int64_t[::1] damage_adjustment, const int64_t[::1] rolls, const int64_t[::1] automatic,
           bint hit_on_equal, bint critical, int64_t[::1] counts, int32_t[::1] hits_out,
           int32_t[::1] rounds_hit_out, int64_t[::1] damage_out):
    cdef uint32_t kilodie_threshold = rejection_threshold(KILODIE)
    cdef uint32_t sides, last_sides = 0, dice_threshold = 0, joint_threshold = 0
    cdef uint64_t faces, last_faces = 0
    cdef int64_t k, n_rolls, first_block, last_block, first_whole, damage, hits = 0, total = 0, rounds_hit = 0
    cdef int64_t rolls_total = 0, rounds_fired = 0, end = start + count
    cdef bint auto
    cdef Stream stream
    cdef Fired fired, head, tail
    cdef bint uniform = (bonus.shape[0] == 1 and maximum_roll.shape[0] == 1 and armour_rating.shape[0] == 1
                         and adjustment.shape[0] == 1 and dice_count.shape[0] == 1 and dice_sides.shape[0] == 1
                         and dice_modifier.shape[0] == 1 and damage_adjustment.shape[0] == 1
                         and rolls.shape[0] == 1 and automatic.shape[0] == 1)
    cdef bint keep_hits = hits_out.shape[0] > 0, keep_rounds = rounds_hit_out.shape[0] > 0
    cdef bint keep_damage = damage_out.shape[0] > 0
    if uniform and not (keep_hits or keep_rounds or keep_damage):
        faces = _joint_faces(rolls[0], automatic[0] != 0, dice_count[0], <uint64_t>dice_sides[0])
        if faces and dice_count[0] <= FAST_DICE:
            # Whole dense blocks in the fast path, the units at either end one by one.
            sides = <uint32_t>dice_sides[0]
            first_block = (start + 3) >> 2
            last_block = _max(first_block, end >> 2)
            first_whole = _min(end, first_block * 4)
            with nogil:
                hits = attack_count(<uint32_t>seed, <uint32_t>(seed >> 32), first_block, last_block,
                                    _kilodie_bar(bonus[0], maximum_roll[0], armour_rating[0], adjustment[0],
                                                 hit_on_equal, critical),
                                    sides if dice_count[0] >= 1 else 1, sides if dice_count[0] >= 2 else 1,
                                    sides if dice_count[0] >= 3 else 1,
                                    dice_count[0] + dice_modifier[0] + damage_adjustment[0],
                                    rejection_threshold(<uint32_t>faces), &damage)
                total = damage
                # The units outside whole blocks (at most 3 at each end) one by one.
                head = _joint_units(seed, start, first_whole, faces, bonus[0], maximum_roll[0], armour_rating[0],
                                    adjustment[0], dice_count[0], sides, dice_modifier[0], damage_adjustment[0],
                                    hit_on_equal, critical)
                tail = _joint_units(seed, _max(last_block * 4, start), end, faces, bonus[0], maximum_roll[0],
                                    armour_rating[0], adjustment[0], dice_count[0], sides, dice_modifier[0],
                                    damage_adjustment[0], hit_on_equal, critical)
                hits += head.hits + tail.hits
                total += head.damage + tail.damage
            counts[0] += count
            counts[1] += hits
            counts[2] += total
            counts[3] += count
            counts[4] += hits
            return
    with nogil:
        for k in range(count):
            sides = <uint32_t>dice_sides[k if dice_sides.shape[0] > 1 else 0]
            if sides != last_sides:  # a threshold is a division: only when the die size changes
                dice_threshold = rejection_threshold(sides)
                last_sides = sides
            n_rolls = rolls[k if rolls.shape[0] > 1 else 0]
            auto = automatic[k if automatic.shape[0] > 1 else 0] != 0
            faces = _joint_faces(n_rolls, auto, dice_count[k if dice_count.shape[0] > 1 else 0], sides)
            if faces != last_faces:
                joint_threshold = rejection_threshold(<uint32_t>faces) if faces else 0
                last_faces = faces
            fired = _fire_item(&stream, seed, <uint64_t>(start + k), faces, joint_threshold,
                               bonus[k if bonus.shape[0] > 1 else 0],
                               maximum_roll[k if maximum_roll.shape[0] > 1 else 0],
                               armour_rating[k if armour_rating.shape[0] > 1 else 0],
                               adjustment[k if adjustment.shape[0] > 1 else 0],
                               dice_count[k if dice_count.shape[0] > 1 else 0], sides, dice_threshold,
                               dice_modifier[k if dice_modifier.shape[0] > 1 else 0],
                               damage_adjustment[k if damage_adjustment.shape[0] > 1 else 0],
                               n_rolls, auto, hit_on_equal, critical, kilodie_threshold)
            rolls_total += n_rolls
            rounds_fired += n_rolls * (ROUNDS_PER_BURST if auto else 1)
            hits += fired.hits
            total += fired.damage
            rounds_hit += fired.rounds_hit
            if keep_hits:
                hits_out[k] = <int32_t>fired.hits
            if keep_rounds:
                rounds_hit_out[k] = <int32_t>fired.rounds_hit
            if keep_damage:
                damage_out[k] = fired.damage
    counts[0] += rolls_total
    counts[1] += hits
    counts[2] += total
    counts[3] += rounds_fired
    counts[4] += rounds_hit


cdef class OneAttack:
    """One prepared unit of fire (combatsim.exp.Attack): ``resolve(seed, index)`` is unit
    ``index`` of ``attack`` with these parameters, as (hits, rounds_hit, damage). Callers validate."""

    cdef int64_t bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_modifier, damage_adjustment, rolls
    cdef uint32_t dice_sides, dice_threshold, joint_threshold, kilodie_threshold
    cdef uint64_t faces
    cdef bint automatic, hit_on_equal, critical

    def __cinit__(self, int64_t bonus, int64_t maximum_roll, int64_t armour_rating, int64_t adjustment,
                  int64_t dice_count, int64_t dice_sides, int64_t dice_modifier, int64_t damage_adjustment,
                  int64_t rolls, int64_t automatic, bint hit_on_equal, bint critical):
        self.bonus = bonus
        self.maximum_roll = maximum_roll
        self.armour_rating = armour_rating
        self.adjustment = adjustment
        self.dice_count = dice_count
        self.dice_sides = <uint32_t>dice_sides
        self.dice_modifier = dice_modifier
        self.damage_adjustment = damage_adjustment
        self.rolls = rolls
        self.automatic = automatic != 0
        self.hit_on_equal = hit_on_equal
        self.critical = critical
        # What attack() derives per call, once.
        self.dice_threshold = rejection_threshold(self.dice_sides) if self.dice_sides else 0
        self.kilodie_threshold = rejection_threshold(KILODIE)
        self.faces = _joint_faces(rolls, self.automatic, dice_count, self.dice_sides)
        self.joint_threshold = rejection_threshold(<uint32_t>self.faces) if self.faces else 0

    def resolve(self, uint64_t seed, int64_t index):
        cdef Stream stream
        cdef Fired fired = _fire_item(&stream, seed, <uint64_t>index, self.faces, self.joint_threshold, self.bonus,
                                      self.maximum_roll, self.armour_rating, self.adjustment, self.dice_count,
                                      self.dice_sides, self.dice_threshold, self.dice_modifier,
                                      self.damage_adjustment, self.rolls, self.automatic, self.hit_on_equal,
                                      self.critical, self.kilodie_threshold)
        return fired.hits, fired.rounds_hit, fired.damage
