"""Storylines of set (a): what two friends tell each other over months of chats.

A story belongs to one speaker (X) and is told to the other (Y) in beats, each beat in a
later session than the one before (a plan, what happened, a change of mind). Turns are
(role, text); `{ago}` is a relative time ("yesterday", "last weekend") resolved against
the session date, as people write. Questions name their evidence as (beat, turn).

Categories: single (one turn answers it), temporal (when / which came first), multi (two
or more turns), paraphrase (shares no content word with its evidence beyond the
speaker's name: checked by the generator, which relabels a question that does not pass).
Each option of `options` is one coherent filling of the slots.
"""

STORIES = [
    {
        "id": "puppy",
        "event": "adopt {pet}",
        "options": [
            {"pet": "Biscuit", "breed": "beagle", "toy": "a squeaky carrot"},
            {"pet": "Pepper", "breed": "border collie", "toy": "a rope ball"},
            {"pet": "Miso", "breed": "corgi mix", "toy": "a rubber duck"},
        ],
        "beats": [
            [
                ("X", "Big news: I adopted a {breed} from the shelter {ago}. His name is {pet}!"),
                ("Y", "Stop it, {pet} is the perfect name. How's he settling in?"),
                (
                    "X",
                    "He chewed up one of my running shoes the first night, but he sleeps in his crate now.",
                ),
                ("Y", "Ha, classic. Send pictures when you can."),
            ],
            [
                ("X", "{pet} passed his obedience class {ago}, he can finally sit and stay on command."),
                ("Y", "Proud dog parent moment! What's his favourite thing these days?"),
                ("X", "{toy}. He carries it everywhere, even to bed."),
            ],
        ],
        "questions": [
            ("single", "What is the name of {X}'s dog?", [(0, 0)]),
            ("single", "What breed is {pet}?", [(0, 0)]),
            ("temporal", "When did {X} adopt {pet}?", [(0, 0)]),
            ("paraphrase", "Which four-legged companion joined {X}'s household?", [(0, 0)]),
            ("single", "What did {X}'s puppy destroy on the first night?", [(0, 2)]),
            (
                "multi",
                "Which toy does the {breed} that passed obedience class carry around?",
                [(1, 0), (1, 2), (0, 0)],
            ),
            ("temporal", "When did {pet} complete his obedience training?", [(1, 0)]),
        ],
    },
    {
        "id": "job",
        "event": "interview at {company}",
        "options": [
            {
                "company": "Lumen Analytics",
                "role": "data engineer",
                "boss": "Farah",
                "perk": "Fridays off every other week",
            },
            {
                "company": "Brightwater Health",
                "role": "UX designer",
                "boss": "Kenji",
                "perk": "a fully remote team",
            },
            {
                "company": "Northfield Robotics",
                "role": "product manager",
                "boss": "Alana",
                "perk": "a learning budget",
            },
        ],
        "beats": [
            [
                ("X", "I had a second-round interview at {company} {ago} for a {role} position."),
                ("Y", "Oh nice, how did it go?"),
                ("X", "Honestly better than I expected. They asked me to do a take-home exercise by Monday."),
            ],
            [
                ("X", "Guess who got the offer from {company}? This person!"),
                ("Y", "Congratulations!! Are you taking it?"),
                ("X", "Yes, I signed {ago}. The salary is a bit higher and they offer {perk}."),
                ("Y", "That's a huge upgrade. When do you start?"),
                ("X", "In three weeks, I need to give notice at my current job first."),
            ],
            [
                ("X", "First week at the new job done. My manager {boss} is really supportive."),
                ("Y", "So glad it's a good fit. Is the commute okay?"),
                ("X", "It's forty minutes by train, I just read on the way."),
            ],
        ],
        "questions": [
            ("single", "Where did {X} interview for a {role} role?", [(0, 0)]),
            ("temporal", "When did {X} have the second interview at {company}?", [(0, 0)]),
            ("single", "What perk does {X}'s new employer offer?", [(1, 2)]),
            ("single", "Who is {X}'s manager at the new job?", [(2, 0)]),
            ("paraphrase", "Did {X} accept the employment contract?", [(1, 2)]),
            (
                "multi",
                "What is the name of {X}'s manager at {company}, and how long is the commute?",
                [(2, 0), (2, 2)],
            ),
            ("temporal", "When did {X} sign with {company}?", [(1, 2)]),
        ],
    },
    {
        "id": "race",
        "event": "sign up for the {race}",
        "options": [
            {"race": "Lakeshore half marathon", "injury": "shin splints", "time": "1:58"},
            {"race": "Riverside 10K", "injury": "a sore knee", "time": "52 minutes"},
            {"race": "Harbor City marathon", "injury": "a pulled calf", "time": "4:21"},
        ],
        "beats": [
            [
                ("X", "Okay I did something impulsive, I signed up for the {race}."),
                ("Y", "You?? The person who hates running?"),
                ("X", "I know! I want a goal for this year. I'm following a sixteen-week plan."),
            ],
            [
                ("Y", "How's the training going?"),
                ("X", "Not great, I got {injury} {ago} and had to skip my long run."),
                ("Y", "Ouch. Rest up, don't push through it."),
                ("X", "My physio said two weeks of cycling instead, then ease back in."),
            ],
            [
                ("X", "I finished the {race}! Official time {time}."),
                ("Y", "That's amazing, I'm so proud of you."),
                ("X", "My legs are destroyed but I'm already looking at the next one."),
            ],
        ],
        "questions": [
            ("single", "Which race did {X} register for?", [(0, 0)]),
            ("single", "What injury interrupted {X}'s training?", [(1, 1)]),
            ("single", "What was {X}'s finishing time in the {race}?", [(2, 0)]),
            ("temporal", "When did {X} get injured while training?", [(1, 1)]),
            ("paraphrase", "How long did it take {X} to cross the finish line?", [(2, 0)]),
            ("multi", "What did the physio recommend after {X} got {injury}?", [(1, 1), (1, 3)]),
            ("temporal", "When did {X} complete the {race}?", [(2, 0)]),
        ],
    },
    {
        "id": "trip",
        "event": "plan a trip to {first}",
        "options": [
            {
                "first": "Lisbon",
                "second": "Porto",
                "reason": "the flights to Lisbon doubled in price",
                "best": "the tiled houses along the river",
            },
            {
                "first": "Kyoto",
                "second": "Seoul",
                "reason": "a friend in Seoul offered a spare room",
                "best": "the night markets",
            },
            {
                "first": "Iceland",
                "second": "the Scottish Highlands",
                "reason": "the ring road is closed for repairs in spring",
                "best": "hiking up to the Old Man of Storr",
            },
        ],
        "beats": [
            [
                ("X", "I'm planning a trip to {first} in the spring, just me and a backpack."),
                ("Y", "Jealous! How long are you going for?"),
                ("X", "Ten days, I've been making a spreadsheet of hostels."),
            ],
            [
                ("X", "Change of plans, I'm going to {second} instead of {first}."),
                ("Y", "What happened?"),
                ("X", "Basically {reason}, so it made more sense."),
            ],
            [
                ("X", "I'm back from {second}, still jet-lagged."),
                ("Y", "Welcome back! What was the highlight?"),
                ("X", "Definitely {best}. I took about six hundred photos."),
            ],
        ],
        "questions": [
            ("single", "Where did {X} originally plan to travel?", [(0, 0)]),
            ("single", "Why did {X} change the destination of the spring trip?", [(1, 2), (1, 0)]),
            ("multi", "Where did {X} first plan to go, and where did {X} actually go?", [(0, 0), (1, 0)]),
            ("single", "What was the highlight of {X}'s trip to {second}?", [(2, 2)]),
            ("temporal", "When did {X} get back from {second}?", [(2, 0)]),
            ("paraphrase", "Did {X} stick with the original vacation idea?", [(1, 0)]),
        ],
    },
    {
        "id": "music",
        "event": "start {instrument} lessons",
        "options": [
            {"instrument": "cello", "teacher": "Mrs. Albright", "song": "the Bach prelude in G"},
            {"instrument": "piano", "teacher": "Mr. Okafor", "song": "Clair de Lune"},
            {"instrument": "ukulele", "teacher": "Rosa", "song": "Over the Rainbow"},
        ],
        "beats": [
            [
                ("X", "I started {instrument} lessons {ago}! My teacher is {teacher}."),
                ("Y", "That's so cool. Have you played before?"),
                ("X", "Never, I'm a total beginner. My fingers hurt after twenty minutes."),
            ],
            [
                ("X", "I'm playing {song} at the student recital on Sunday, I'm terrified."),
                ("Y", "You'll be great. Is it a big audience?"),
                ("X", "Maybe thirty people, mostly parents of kids who are way better than me."),
            ],
        ],
        "questions": [
            ("single", "What instrument is {X} learning?", [(0, 0)]),
            ("single", "Who teaches {X} the {instrument}?", [(0, 0)]),
            ("temporal", "When did {X} begin music lessons?", [(0, 0)]),
            ("single", "Which piece did {X} perform at the recital?", [(1, 0)]),
            ("paraphrase", "What does {X} do to make music?", [(0, 0)]),
        ],
    },
    {
        "id": "baby",
        "event": "welcome baby {baby}",
        "event_at": (1, 0),
        "options": [
            {"sib": "my sister Nora", "short": "Nora", "baby": "Eliza", "weight": "seven pounds two ounces"},
            {"sib": "my brother Sam and his wife", "short": "Sam", "baby": "Theo", "weight": "eight pounds"},
            {"sib": "my cousin Ines", "short": "Ines", "baby": "Mateo", "weight": "six pounds nine ounces"},
        ],
        "beats": [
            [
                ("X", "Family news: {sib} just told us they're expecting, due in the autumn."),
                ("Y", "Oh that's wonderful! You're going to be the fun relative."),
                ("X", "I've already bought way too many tiny socks."),
            ],
            [
                ("X", "The baby arrived {ago}! {baby}, {weight}, everyone is healthy."),
                ("Y", "Welcome to the world, {baby}! Have you met them yet?"),
                ("X", "I held {baby} for an hour at the hospital and cried a little."),
            ],
        ],
        "questions": [
            ("single", "What is the name of {short}'s baby?", [(1, 0)]),
            ("temporal", "When was {baby} born?", [(1, 0)]),
            ("single", "How much did {baby} weigh at birth?", [(1, 0)]),
            ("paraphrase", "Which relative of {X} announced a pregnancy?", [(0, 0)]),
            (
                "multi",
                "Who is expecting a baby in {X}'s family, and what did they name the child?",
                [(0, 0), (1, 0)],
            ),
        ],
    },
    {
        "id": "move",
        "event": "sign the lease in {neigh}",
        "options": [
            {
                "neigh": "Maple Heights",
                "problem": "the radiator leaks",
                "feature": "a balcony facing the park",
            },
            {
                "neigh": "the Old Harbour district",
                "problem": "the upstairs neighbour practises drums",
                "feature": "huge windows",
            },
            {"neigh": "Eastgate", "problem": "the dishwasher doesn't drain", "feature": "a tiny garden"},
        ],
        "beats": [
            [
                ("X", "I've been apartment hunting in {neigh}, rents are wild."),
                ("Y", "Anything promising?"),
                ("X", "One place with {feature}, but it's over my budget."),
            ],
            [
                ("X", "I signed the lease {ago}, I'm officially moving to {neigh}."),
                ("Y", "Yay! Need help with boxes?"),
                ("X", "Yes please, moving day is the 1st. I'll bribe you with pizza."),
            ],
            [
                ("X", "New place update: I love it, except {problem}."),
                ("Y", "Did you tell the landlord?"),
                ("X", "Twice. He says someone will come next week."),
            ],
        ],
        "questions": [
            ("single", "Which neighbourhood did {X} move to?", [(1, 0)]),
            ("single", "What problem does {X} have at the new apartment?", [(2, 0)]),
            ("temporal", "When did {X} sign the apartment lease?", [(1, 0)]),
            ("single", "What feature did the apartment {X} liked have?", [(0, 2)]),
            ("paraphrase", "Where does {X} reside these days?", [(1, 0)]),
            (
                "multi",
                "What did {X} promise in return for help on moving day, and what went wrong in the new place?",
                [(1, 2), (2, 0)],
            ),
        ],
    },
    {
        "id": "bookclub",
        "event": "join a book club",
        "options": [
            {"book": "Klara and the Sun", "next": "Piranesi"},
            {"book": "The Overstory", "next": "Demon Copperhead"},
            {"book": "Pachinko", "next": "Tomorrow, and Tomorrow, and Tomorrow"},
        ],
        "beats": [
            [
                ("X", "I joined a book club at the library. We're reading {book} this month."),
                ("Y", "Ooh, I've heard mixed things. Are you enjoying it?"),
                ("X", "The first half was slow but the ending wrecked me."),
            ],
            [
                ("X", "It was my turn to pick for book club, I chose {next}."),
                ("Y", "Good choice, it's on my list too."),
            ],
        ],
        "questions": [
            ("single", "What book did {X}'s book club read first?", [(0, 0)]),
            ("single", "Which novel did {X} choose for the book club?", [(1, 0)]),
            ("single", "What did {X} think of {book}?", [(0, 2)]),
            ("paraphrase", "Does {X} belong to any reading group?", [(0, 0)]),
        ],
    },
    {
        "id": "bake",
        "event": "bake {dish}",
        "options": [
            {
                "dish": "a sourdough loaf",
                "occasion": "my neighbour's housewarming",
                "fix": "a longer proof overnight in the fridge",
            },
            {
                "dish": "a lemon tart",
                "occasion": "my parents' anniversary",
                "fix": "blind baking the crust first",
            },
            {
                "dish": "dumplings from scratch",
                "occasion": "the Lunar New Year dinner",
                "fix": "a thinner dough and more ginger in the filling",
            },
        ],
        "beats": [
            [
                ("X", "I tried to make {dish} for {occasion} {ago}. Disaster."),
                ("Y", "Oh no, what happened?"),
                ("X", "It came out completely flat and raw in the middle. We ordered takeout."),
            ],
            [
                ("X", "Second attempt at {dish} worked! The trick was {fix}."),
                ("Y", "Redemption! Save me a piece next time."),
            ],
        ],
        "questions": [
            ("single", "What did {X} try to cook for {occasion}?", [(0, 0)]),
            ("single", "What trick made {X}'s second attempt succeed?", [(1, 0)]),
            ("multi", "How did {X}'s first attempt at {dish} turn out, and what fixed it?", [(0, 2), (1, 0)]),
            ("temporal", "When did {X}'s baking attempt fail?", [(0, 0)]),
        ],
    },
    {
        "id": "ankle",
        "event": "hurt an ankle playing {sport}",
        "options": [
            {"sport": "basketball", "weeks": "six weeks"},
            {"sport": "five-a-side football", "weeks": "a month"},
            {"sport": "bouldering", "weeks": "eight weeks"},
        ],
        "beats": [
            [
                ("X", "I sprained my ankle playing {sport} {ago}. I'm on crutches."),
                ("Y", "Oh no! How long until you're back?"),
                ("X", "The doctor says {weeks}, no {sport} until then."),
            ],
            [
                ("X", "Ankle is healed, I played {sport} again {ago} and nothing hurt."),
                ("Y", "Careful out there, wear the brace."),
            ],
        ],
        "questions": [
            ("single", "How did {X} sprain an ankle?", [(0, 0)]),
            ("temporal", "When did {X} get hurt playing {sport}?", [(0, 0)]),
            ("single", "How long did the doctor say {X}'s recovery would take?", [(0, 2)]),
            ("paraphrase", "Why was {X} walking with assistance?", [(0, 0)]),
            ("temporal", "When did {X} return to {sport} after the injury?", [(1, 0)]),
        ],
    },
    {
        "id": "car",
        "event": "buy the {car}",
        "event_at": (1, 0),
        "options": [
            {"car": "used Honda Fit", "old": "my old Corolla", "colour": "blue"},
            {"car": "secondhand Subaru Outback", "old": "the hatchback", "colour": "dark green"},
            {"car": "used Mazda 3", "old": "my dad's old Volvo", "colour": "red"},
        ],
        "beats": [
            [
                ("X", "{old} finally died on the motorway {ago}. Transmission is gone."),
                ("Y", "Oh no, were you okay?"),
                ("X", "Yeah, just stuck on the hard shoulder for two hours waiting for the tow truck."),
            ],
            [
                ("X", "I bought a {car} {ago}! It's {colour} and only has 40,000 miles on it."),
                ("Y", "Nice, road trip soon?"),
            ],
        ],
        "questions": [
            ("single", "What car did {X} buy?", [(1, 0)]),
            ("single", "What colour is {X}'s new car?", [(1, 0)]),
            ("single", "What happened to {old}?", [(0, 0)]),
            ("temporal", "When did {X}'s car break down?", [(0, 0)]),
            ("paraphrase", "Which vehicle did {X} purchase as a replacement?", [(1, 0)]),
        ],
    },
    {
        "id": "volunteer",
        "event": "start volunteering at {place}",
        "options": [
            {
                "place": "the food bank on Pine Street",
                "day": "Saturday mornings",
                "task": "sorting donations",
            },
            {"place": "an animal rescue", "day": "Wednesday evenings", "task": "walking the older dogs"},
            {"place": "a literacy charity", "day": "Tuesday afternoons", "task": "reading with kids"},
        ],
        "beats": [
            [
                ("X", "I started volunteering at {place}, {day}."),
                ("Y", "That's lovely. What do you do there?"),
                ("X", "Mostly {task}. It's the best part of my week."),
            ],
        ],
        "questions": [
            ("single", "Where does {X} volunteer?", [(0, 0)]),
            ("single", "What does {X} do as a volunteer?", [(0, 2)]),
            ("single", "When in the week does {X} volunteer?", [(0, 0)]),
            ("paraphrase", "Does {X} give any unpaid time to a good cause?", [(0, 0)]),
        ],
    },
    {
        "id": "garden",
        "event": "plant {plant}",
        "options": [
            {"plant": "cherry tomatoes", "pest": "aphids", "harvest": "about forty tomatoes"},
            {"plant": "chillies", "pest": "slugs", "harvest": "a whole bowl of jalapeños"},
            {"plant": "strawberries", "pest": "pigeons", "harvest": "a small punnet of berries"},
        ],
        "beats": [
            [
                ("X", "I started growing {plant} on my balcony this spring."),
                ("Y", "Green fingers! Anything sprouting yet?"),
                ("X", "Little seedlings, but I'm fighting {pest} every day."),
            ],
            [
                ("X", "First harvest {ago}: {harvest}!"),
                ("Y", "Homegrown is the best. What are you making with them?"),
                ("X", "A salsa, obviously."),
            ],
        ],
        "questions": [
            ("single", "What is {X} growing on the balcony?", [(0, 0)]),
            ("single", "Which pest troubled {X}'s plants?", [(0, 2)]),
            ("temporal", "When did {X} get the first harvest?", [(1, 0)]),
            ("paraphrase", "Is {X} into gardening, and what crop?", [(0, 0)]),
        ],
    },
    {
        "id": "concert",
        "event": "see {band} live",
        "options": [
            {"band": "Fleet Foxes", "venue": "the Roundhouse", "moment": "the acoustic encore"},
            {
                "band": "Phoebe Bridgers",
                "venue": "the Greek Theatre",
                "moment": "when the whole crowd sang along",
            },
            {"band": "Khruangbin", "venue": "Red Rocks", "moment": "the sunset during the second song"},
        ],
        "beats": [
            [
                ("X", "I got tickets to see {band} at {venue}! It sold out in minutes."),
                ("Y", "No way, I tried to get those too. When is it?"),
                ("X", "End of next month. I'm counting the days."),
            ],
            [
                ("X", "The {band} concert {ago} was unreal."),
                ("Y", "Best moment?"),
                ("X", "{moment}. I got chills."),
            ],
        ],
        "questions": [
            ("single", "Which band did {X} see live?", [(0, 0), (1, 0)]),
            ("single", "Where did {X} see {band}?", [(0, 0)]),
            ("single", "What was {X}'s favourite moment of the concert?", [(1, 2)]),
            ("temporal", "When did {X} go to the {band} concert?", [(1, 0)]),
            ("paraphrase", "Which musicians did {X} watch perform?", [(0, 0), (1, 0)]),
        ],
    },
    {
        "id": "language",
        "event": "start learning {lang}",
        "options": [
            {"lang": "Japanese", "exam": "the JLPT N5", "streak": "120 days"},
            {"lang": "Spanish", "exam": "the DELE A2", "streak": "95 days"},
            {"lang": "Portuguese", "exam": "the CAPLE A2", "streak": "200 days"},
        ],
        "beats": [
            [
                ("X", "I've been learning {lang} on an app every morning, my streak is {streak}."),
                ("Y", "Impressive! Why {lang}?"),
                ("X", "I want to be able to chat with people when I travel, not just order food."),
            ],
            [
                ("X", "I registered for {exam} in December."),
                ("Y", "Wow, going official. Nervous?"),
                ("X", "Only about the listening part, people speak so fast."),
            ],
        ],
        "questions": [
            ("single", "Which language is {X} studying?", [(0, 0)]),
            ("single", "What exam did {X} sign up for?", [(1, 0)]),
            ("single", "Which part of {exam} worries {X}?", [(1, 2)]),
            ("paraphrase", "Is {X} picking up a foreign tongue?", [(0, 0)]),
        ],
    },
    {
        "id": "dad",
        "event": "celebrate {dad}'s retirement",
        "options": [
            {"dad": "my dad", "years": "thirty-five years as a postman", "hobby": "woodworking"},
            {"dad": "my mum", "years": "thirty years teaching maths", "hobby": "watercolour painting"},
            {"dad": "my stepdad Carl", "years": "twenty-eight years at the factory", "hobby": "fly fishing"},
        ],
        "beats": [
            [
                ("X", "We threw a surprise retirement party for {dad} {ago}, after {years}."),
                ("Y", "Aww, did they suspect anything?"),
                ("X", "Not a thing. There were tears and a very bad karaoke session."),
            ],
            [
                ("X", "Retirement update: {dad} has taken up {hobby} and talks about nothing else."),
                ("Y", "Ha, that's the dream honestly."),
            ],
        ],
        "questions": [
            ("single", "Whose retirement did {X} celebrate?", [(0, 0)]),
            ("single", "What hobby did {X}'s parent take up after retiring?", [(1, 0)]),
            ("temporal", "When was the surprise retirement party?", [(0, 0)]),
            ("paraphrase", "How long did {X}'s parent work before stopping?", [(0, 0)]),
        ],
    },
    {
        "id": "wedding",
        "event": "agree to be {friend}'s {role}",
        "options": [
            {"friend": "Jess", "place": "a vineyard in Napa", "role": "maid of honour"},
            {"friend": "Marcus", "place": "a castle in Edinburgh", "role": "best man"},
            {"friend": "Aiko", "place": "a beach in Crete", "role": "officiant"},
        ],
        "beats": [
            [
                ("X", "{friend} asked me to be the {role} at the wedding!"),
                ("Y", "That's such an honour. Where's the wedding?"),
                ("X", "{place}, in June. I have to write a speech, help."),
            ],
            [
                ("X", "{friend}'s wedding was {ago}. My speech got laughs AND tears."),
                ("Y", "I knew you'd nail it."),
            ],
        ],
        "questions": [
            ("single", "What role did {X} have at {friend}'s wedding?", [(0, 0)]),
            ("single", "Where was {friend}'s wedding held?", [(0, 2)]),
            ("temporal", "When did {friend} get married?", [(1, 0)]),
            ("paraphrase", "How was {X}'s toast received by the guests?", [(1, 0)]),
        ],
    },
    {
        "id": "diet",
        "event": "go vegetarian",
        "options": [
            {"why": "a documentary about factory farming", "back": "fish"},
            {"why": "my cholesterol results", "back": "chicken once a week"},
            {"why": "my girlfriend's cooking", "back": "seafood"},
        ],
        "beats": [
            [
                ("X", "I've decided to go vegetarian, mostly because of {why}."),
                ("Y", "Respect. Is it hard?"),
                ("X", "The first week I dreamt about bacon, but it's getting easier."),
            ],
            [
                ("X", "Confession: I started eating {back} again {ago}."),
                ("Y", "No judgement. What changed?"),
                ("X", "I was always tired and my doctor suggested more protein."),
            ],
        ],
        "questions": [
            ("single", "Why did {X} decide to become vegetarian?", [(0, 0)]),
            ("single", "Is {X} still vegetarian?", [(1, 0)]),
            ("multi", "Why did {X} stop eating meat and why did {X} change that later?", [(0, 0), (1, 2)]),
            ("paraphrase", "Did {X} give up animal products from the plate permanently?", [(0, 0), (1, 0)]),
        ],
    },
    {
        "id": "photo",
        "event": "buy a {camera}",
        "options": [
            {"camera": "Fujifilm X100V", "show": "the café on Elm Street", "subject": "street portraits"},
            {
                "camera": "second-hand Leica M6",
                "show": "the community arts centre",
                "subject": "black and white landscapes",
            },
            {
                "camera": "Sony a6400",
                "show": "the public library gallery",
                "subject": "birds at the wetlands",
            },
        ],
        "beats": [
            [
                ("X", "I treated myself to a {camera}. Photography is my new thing."),
                ("Y", "Fancy! What do you like to shoot?"),
                ("X", "Mostly {subject}."),
            ],
            [
                ("X", "Three of my prints are going up in an exhibition at {show}!"),
                ("Y", "Your first show! I'm coming to the opening."),
            ],
        ],
        "questions": [
            ("single", "Which camera did {X} buy?", [(0, 0)]),
            ("single", "What does {X} like to photograph?", [(0, 2)]),
            ("single", "Where are {X}'s photos being exhibited?", [(1, 0)]),
            ("paraphrase", "Which hobby involving pictures did {X} pick up?", [(0, 0)]),
        ],
    },
    {
        "id": "promotion",
        "event": "get promoted to {title}",
        "event_at": (1, 0),
        "options": [
            {"manager": "Gareth", "feedback": "my presentations were too long", "title": "team lead"},
            {"manager": "Ms. Duarte", "feedback": "I don't delegate enough", "title": "senior analyst"},
            {
                "manager": "Ravi",
                "feedback": "I miss deadlines on documentation",
                "title": "engineering manager",
            },
        ],
        "beats": [
            [
                ("X", "Rough week. My manager {manager} said in my review that {feedback}."),
                ("Y", "That stings. Was it fair?"),
                ("X", "Kind of, annoyingly. I'm working on it."),
            ],
            [
                ("X", "Update on the work drama: I got promoted to {title} {ago}!"),
                ("Y", "From bad review to promotion, what a turnaround!"),
            ],
        ],
        "questions": [
            ("single", "What criticism did {X} receive in the review?", [(0, 0)]),
            ("single", "What was {X} promoted to?", [(1, 0)]),
            ("temporal", "When did {X} get the promotion?", [(1, 0)]),
            (
                "multi",
                "What feedback did {manager} give {X}, and what happened to {X}'s job title later?",
                [(0, 0), (1, 0)],
            ),
            ("paraphrase", "Did {X} move up at the office?", [(1, 0)]),
        ],
    },
    {
        "id": "foster",
        "event": "foster {cat}",
        "options": [
            {"cat": "Mochi", "colour": "grey tabby", "decision": "I'm adopting her for good"},
            {"cat": "Pumpkin", "colour": "ginger", "decision": "a family with kids adopted him"},
            {"cat": "Olive", "colour": "black", "decision": "she's staying with me forever"},
        ],
        "beats": [
            [
                ("X", "I'm fostering a {colour} cat called {cat} for the shelter."),
                ("Y", "A foster fail waiting to happen!"),
                ("X", "Ha, it's only for a month. Probably."),
            ],
            [
                ("X", "Final decision on {cat}: {decision}."),
                ("Y", "Honestly, that's the best outcome."),
            ],
        ],
        "questions": [
            ("single", "What is the name of the cat {X} fostered?", [(0, 0)]),
            ("single", "What happened with {cat} in the end?", [(1, 0)]),
            ("paraphrase", "Is {X} temporarily caring for a shelter animal?", [(0, 0)]),
        ],
    },
    {
        "id": "savings",
        "event": "start saving for {goal}",
        "options": [
            {"goal": "a deposit on a flat", "amount": "$500 a month", "new": "a sabbatical year"},
            {"goal": "a new road bike", "amount": "$150 a month", "new": "a trip to see my grandparents"},
            {"goal": "a master's degree", "amount": "$400 a month", "new": "an emergency fund first"},
        ],
        "beats": [
            [
                ("X", "I'm saving for {goal}, putting away {amount}."),
                ("Y", "Good for you. Spreadsheet person?"),
                ("X", "Of course, colour-coded."),
            ],
            [
                ("X", "I've changed my mind about {goal}; the money is going to {new} now."),
                ("Y", "Priorities shift, that's fine."),
            ],
        ],
        "questions": [
            ("single", "How much does {X} save every month?", [(0, 0)]),
            ("multi", "What was {X} originally saving for and what is the money for now?", [(0, 0), (1, 0)]),
            ("paraphrase", "Has {X}'s financial target changed?", [(1, 0)]),
        ],
    },
    {
        "id": "allergy",
        "event": "find out about the {allergen} allergy",
        "options": [
            {"allergen": "cashew", "where": "a work lunch"},
            {"allergen": "shellfish", "where": "my cousin's birthday dinner"},
            {"allergen": "sesame", "where": "a street food festival"},
        ],
        "beats": [
            [
                (
                    "X",
                    "Scary one: I had an allergic reaction at {where} {ago}. Turns out I'm allergic to {allergen}.",
                ),
                ("Y", "That's terrifying! Are you okay now?"),
                ("X", "Yes, they gave me antihistamines. I carry an EpiPen now."),
            ],
        ],
        "questions": [
            ("single", "What is {X} allergic to?", [(0, 0)]),
            ("single", "What does {X} carry because of the allergy?", [(0, 2)]),
            ("temporal", "When did {X} have the allergic reaction?", [(0, 0)]),
            ("paraphrase", "Which food must {X} avoid?", [(0, 0)]),
        ],
    },
]

# Things friends say that carry no storyline: (role, text) exchanges; roles swap at random.
SMALL_TALK = [
    [
        ("A", "Is it just me or has this week lasted a month?"),
        ("B", "Not just you. I need a nap that lasts until Monday."),
    ],
    [("A", "It's been raining nonstop here."), ("B", "Same, my umbrella flipped inside out this morning.")],
    [("A", "Did you watch the finale?"), ("B", "Not yet, no spoilers please!"), ("A", "My lips are sealed.")],
    [("A", "I made way too much soup again."), ("B", "Freeze it, future you will be grateful.")],
    [("A", "What are you up to this weekend?"), ("B", "Nothing at all, and I'm excited about it.")],
    [("A", "Coffee count today: four."), ("B", "That explains the typing speed.")],
    [("A", "I've been sleeping so badly."), ("B", "Try no phone an hour before bed, it helped me.")],
    [("A", "My phone screen cracked again."), ("B", "Time for a real case, my friend.")],
    [("A", "I finally cleaned out my closet."), ("B", "The satisfaction is unmatched.")],
    [
        ("A", "Have you tried that new ramen place?"),
        ("B", "Not yet, is it worth the queue?"),
        ("A", "The broth is, the service isn't."),
    ],
    [("A", "Work is so busy right now."), ("B", "Hang in there, it'll calm down after the quarter ends.")],
    [("A", "Lol I just saw the meme you sent."), ("B", "I knew you'd appreciate it.")],
    [("A", "I'm thinking of getting bangs."), ("B", "Bold. Wait a week and see if you still want them.")],
    [("A", "My neighbour's been mowing the lawn at 7am."), ("B", "Criminal behaviour.")],
    [("A", "Any podcast recommendations?"), ("B", "I've been into a history one about shipwrecks lately.")],
    [("A", "The heatwave is unbearable."), ("B", "I've basically been living in front of the fan.")],
    [("A", "I should go to the gym more."), ("B", "We say that every week."), ("A", "True.")],
    [("A", "Groceries are so expensive now."), ("B", "I know, I spent sixty on basically nothing.")],
    [("A", "I can't believe it's already this time of year."), ("B", "Time flies when you're exhausted.")],
    [
        ("A", "I reorganised my whole desk today instead of working."),
        ("B", "Productive procrastination, a classic."),
    ],
    [("A", "Did you ever find your keys?"), ("B", "They were in the fridge. Don't ask.")],
    [("A", "I'm trying to drink more water."), ("B", "Get one of those bottles with the time markings.")],
    [
        ("A", "My plant is dying and I don't know why."),
        ("B", "Too much water, probably. It's always too much water."),
    ],
    [("A", "Traffic was terrible today."), ("B", "There was an accident on the ring road, I heard.")],
    [("A", "Sorry for the late reply, crazy day."), ("B", "No worries at all!")],
]
GREETINGS = [
    [("A", "Hey {B}! How's it going?"), ("B", "Hey! Good, busy. You?")],
    [("A", "Morning {B}!"), ("B", "Morning! Long time no talk.")],
    [("A", "Hi hi, got a minute to chat?"), ("B", "Always for you. What's new?")],
    [("A", "{B}! I have updates."), ("B", "Spill.")],
    [("A", "Hey, sorry I went quiet last week."), ("B", "No stress, life happens. How are you?")],
]
CLOSINGS = [
    [("A", "Okay I have to run, talk soon!"), ("B", "Bye! Take care.")],
    [("A", "Anyway, dinner's ready. Chat later?"), ("B", "Definitely, enjoy!")],
    [("A", "Let's catch up properly soon."), ("B", "Yes, coffee next week?")],
    [("A", "Night! Sleep well."), ("B", "You too!")],
]
# Unanswerable questions: the same style, about things nobody in the chats said.
ADVERSARIAL = [
    "What is the name of {Y}'s horse?",
    "Which university did {X} graduate from?",
    "When did {Y} get a tattoo?",
    "What is {X}'s favourite football team?",
    "How many siblings does {Y} have in Australia?",
    "What did {X} buy at the antique fair?",
    "Which opera did {Y} attend in Vienna?",
    "When did {X} go skydiving?",
    "What is the name of {Y}'s landlord's parrot?",
    "Which programming language did {X} teach at the bootcamp?",
]
