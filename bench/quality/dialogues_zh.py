"""Set (b): Chinese multi-turn dialogues whose next turn should recall one personal memory.

Each user holds ~85 semantic memories: one of every KIND (preferences, family, work,
health, habits, plans; slot values differ per user) and fillers (facts no dialogue here
asks for, which compete). A query is the chat *before* the turn that needs a memory: a
few 用户/助手 turns, colloquial, the need implied (a recipe question for a peanut
allergy). Some users store a kind's memory in English and some dialogues are in English
(cross-lingual); CHITCHAT dialogues need no memory (they calibrate a relevance floor).
"""

from __future__ import annotations

import random

U, A = "用户", "助手"

KINDS = [
    {
        "id": "allergy",
        "mem": ["我对{x}过敏，吃了会起疹子", "用户对{x}过敏，严重时需要去医院"],
        "en": "I'm allergic to {x_en}; it gives me hives.",
        "values": [
            {"x": "花生", "x_en": "peanuts"},
            {"x": "虾和螃蟹", "x_en": "shrimp and crab"},
            {"x": "芒果", "x_en": "mango"},
        ],
        "dialogues": [
            [
                (U, "周末朋友来家里吃饭"),
                (A, "好呀，打算做几个菜？"),
                (U, "四五个吧，你帮我想想有什么好做又体面的菜"),
            ],
            [(U, "下午有点饿"), (A, "要不要点个外卖小吃？"), (U, "行，你帮我挑一家甜品店，什么都行")],
        ],
        "dialogues_en": [
            [
                (U, "My colleagues are ordering Thai food for lunch"),
                (A, "Nice, do you want me to suggest some dishes?"),
                (U, "Yes please, pick two for me"),
            ]
        ],
    },
    {
        "id": "sugar",
        "mem": ["用户血糖偏高，医生让控制糖分摄入", "我在控糖，体检查出空腹血糖{x}"],
        "en": "My fasting blood sugar was {x}; the doctor told me to cut down on sugar.",
        "values": [{"x": "7.1"}, {"x": "6.8"}, {"x": "7.4"}],
        "dialogues": [
            [
                (U, "下午开会开得头昏脑涨"),
                (A, "辛苦了，要不要休息一下？"),
                (U, "想来点下午茶提提神，推荐点喝的吃的"),
            ],
            [(U, "中秋快到了"), (A, "是呀，有什么安排吗？"), (U, "公司发了月饼券，你说我换哪种口味的好")],
        ],
    },
    {
        "id": "spicy",
        "mem": ["用户无辣不欢，尤其喜欢{x}", "我特别能吃辣，最爱{x}"],
        "en": "I love spicy food, especially {x_en}.",
        "values": [
            {"x": "川菜", "x_en": "Sichuan dishes"},
            {"x": "湘菜", "x_en": "Hunan food"},
            {"x": "重庆火锅", "x_en": "Chongqing hotpot"},
        ],
        "dialogues": [
            [
                (U, "今天终于发工资了"),
                (A, "恭喜！要犒劳一下自己吗？"),
                (U, "嗯，晚上想出去吃顿好的，你看去哪家"),
            ],
        ],
        "dialogues_en": [
            [
                (U, "Finally Friday"),
                (A, "Any plans for tonight?"),
                (U, "Dinner out. Help me choose what kind of restaurant"),
            ]
        ],
    },
    {
        "id": "daughter",
        "mem": ["用户的女儿叫{x}，今年{age}岁，在上{grade}", "我女儿{x}{age}岁了，{grade}"],
        "en": "My daughter {x_en} is {age}, she's in {grade_en}.",
        "values": [
            {"x": "朵朵", "x_en": "Duoduo", "age": "6", "grade": "幼儿园大班", "grade_en": "kindergarten"},
            {"x": "小雨", "x_en": "Xiaoyu", "age": "9", "grade": "三年级", "grade_en": "third grade"},
            {"x": "悠悠", "x_en": "Youyou", "age": "4", "grade": "幼儿园小班", "grade_en": "preschool"},
        ],
        "dialogues": [
            [
                (U, "这周六天气好像不错"),
                (A, "是的，晴天，适合出门。"),
                (U, "想带娃出去玩一天，有什么合适的地方吗"),
            ],
            [(U, "孩子下个月过生日"), (A, "要准备礼物吗？"), (U, "对，预算三百左右，送什么好")],
        ],
    },
    {
        "id": "mother",
        "mem": ["用户的妈妈有{x}，每天要按时吃药", "我妈{x}好几年了，一直在吃药控制"],
        "en": "My mother has {x_en} and takes medication every day.",
        "values": [
            {"x": "高血压", "x_en": "high blood pressure"},
            {"x": "糖尿病", "x_en": "diabetes"},
            {"x": "骨质疏松", "x_en": "osteoporosis"},
        ],
        "dialogues": [
            [
                (U, "过年要回老家了"),
                (A, "准备带点什么回去吗？"),
                (U, "想给家里老人买点吃的用的，你有什么建议"),
            ],
            [
                (U, "我妈最近总说没胃口"),
                (A, "可能是天气变化，要注意饮食。"),
                (U, "我周末回去给她做顿饭，做什么好呢"),
            ],
        ],
    },
    {
        "id": "job",
        "mem": ["用户在{x}做{role}，已经工作{years}年", "我目前在{x}当{role}"],
        "en": "I work at {x_en} as a {role_en}.",
        "values": [
            {
                "x": "一家新能源车企",
                "x_en": "an EV maker",
                "role": "电池测试工程师",
                "role_en": "battery test engineer",
                "years": "三",
            },
            {
                "x": "字节跳动",
                "x_en": "ByteDance",
                "role": "产品经理",
                "role_en": "product manager",
                "years": "五",
            },
            {
                "x": "一所中学",
                "x_en": "a middle school",
                "role": "数学老师",
                "role_en": "maths teacher",
                "years": "八",
            },
        ],
        "dialogues": [
            [
                (U, "最近有点想换工作"),
                (A, "是对现在的工作不满意吗？"),
                (U, "也不是，就是想看看机会，你帮我改改简历里的自我介绍"),
            ],
        ],
        "dialogues_en": [
            [
                (U, "I have a networking event tomorrow"),
                (A, "Want to prepare an introduction?"),
                (U, "Yes, write me a short one about myself"),
            ]
        ],
    },
    {
        "id": "commute",
        "mem": ["用户每天坐{x}上班，单程大约{m}分钟", "我通勤靠{x}，路上要{m}分钟"],
        "en": "I commute by {x_en}, about {m} minutes each way.",
        "values": [
            {"x": "地铁10号线", "x_en": "metro line 10", "m": "70"},
            {"x": "公交", "x_en": "bus", "m": "50"},
            {"x": "骑电动车", "x_en": "e-bike", "m": "25"},
        ],
        "dialogues": [
            [(U, "明天早上九点要到公司开会"), (A, "需要我设个提醒吗？"), (U, "好，你说我几点出门比较稳")],
            [(U, "最近想利用碎片时间学点东西"), (A, "可以听播客或者有声书。"), (U, "那推荐几个适合路上听的")],
        ],
    },
    {
        "id": "pet",
        "mem": ["用户养了一只{x}，名字叫{name}", "我家有只{x}叫{name}，{age}岁了"],
        "en": "I have a {x_en} called {name_en}.",
        "values": [
            {"x": "橘猫", "x_en": "ginger cat", "name": "胖虎", "name_en": "Panghu", "age": "3"},
            {"x": "柯基", "x_en": "corgi", "name": "豆豆", "name_en": "Doudou", "age": "2"},
            {"x": "金毛", "x_en": "golden retriever", "name": "旺财", "name_en": "Wangcai", "age": "5"},
        ],
        "dialogues": [
            [
                (U, "国庆打算出去玩一周"),
                (A, "不错，去哪里？"),
                (U, "还没定，不过有件事得先安排好，家里这几天没人"),
            ],
            [(U, "新房子快装修好了"), (A, "恭喜！要准备搬家了吗？"), (U, "嗯，地板选什么材质比较好")],
        ],
        "dialogues_en": [
            [
                (U, "I'm flying to Singapore for a week next month"),
                (A, "Great, need help planning?"),
                (U, "Yes, what should I sort out at home before I leave?"),
            ]
        ],
    },
    {
        "id": "run",
        "mem": ["用户每周{x}，坚持了两年", "我有{x}的习惯"],
        "en": "I {x_en} and have kept it up for two years.",
        "values": [
            {"x": "夜跑三次，每次五公里", "x_en": "run 5 km three evenings a week"},
            {"x": "游泳两次", "x_en": "swim twice a week"},
            {"x": "去健身房练力量四次", "x_en": "lift weights four times a week"},
        ],
        "dialogues": [
            [(U, "双十一想买点运动装备"), (A, "好的，想买哪类？"), (U, "你看我需要添点什么")],
        ],
    },
    {
        "id": "insomnia",
        "mem": ["用户睡眠不好，下午三点以后喝咖啡就会失眠", "我容易失眠，晚上不能碰咖啡和浓茶"],
        "en": "I sleep badly: any coffee after 3 pm keeps me awake.",
        "values": [{}],
        "dialogues": [
            [(U, "今晚要加班赶方案"), (A, "辛苦，要准备点什么吗？"), (U, "整点提神的东西，不然扛不住")],
        ],
        "dialogues_en": [
            [
                (U, "Long night ahead, the deadline is tomorrow"),
                (A, "Anything I can do?"),
                (U, "Suggest something to drink to stay sharp"),
            ]
        ],
    },
    {
        "id": "trip",
        "mem": ["用户计划{month}去{x}旅行", "我打算{month}带家人去{x}玩"],
        "en": "I'm planning a trip to {x_en} in {month_en}.",
        "values": [
            {"x": "日本北海道", "x_en": "Hokkaido", "month": "明年一月", "month_en": "January"},
            {"x": "云南大理", "x_en": "Dali in Yunnan", "month": "五一", "month_en": "early May"},
            {"x": "新疆伊犁", "x_en": "Yili in Xinjiang", "month": "七月", "month_en": "July"},
        ],
        "dialogues": [
            [(U, "最近在做出行清单"), (A, "好的，需要我帮忙列吗？"), (U, "帮我看看衣服带哪些，别带多了")],
            [(U, "护照好像快过期了"), (A, "建议尽早去换发。"), (U, "还有啥手续需要提前办的吗")],
        ],
    },
    {
        "id": "language",
        "mem": ["用户在学{x}，目标是{exam}", "我正在准备{exam}"],
        "en": "I'm learning {x_en} and preparing for {exam}.",
        "values": [
            {"x": "日语", "x_en": "Japanese", "exam": "日语N2考试"},
            {"x": "英语", "x_en": "English", "exam": "雅思7分"},
            {"x": "德语", "x_en": "German", "exam": "德福考试"},
        ],
        "dialogues": [
            [
                (U, "每天下班都好累"),
                (A, "注意休息呀。"),
                (U, "但是考试的事还得抓紧，你帮我排个每天的学习计划"),
            ],
        ],
    },
    {
        "id": "ev",
        "mem": ["用户开的是{x}，纯电车", "我的车是{x}，续航{km}公里左右"],
        "en": "I drive a {x_en}, an electric car with about {km} km of range.",
        "values": [
            {"x": "比亚迪海豹", "x_en": "BYD Seal", "km": "550"},
            {"x": "特斯拉Model 3", "x_en": "Tesla Model 3", "km": "600"},
            {"x": "小鹏P7", "x_en": "Xpeng P7", "km": "500"},
        ],
        "dialogues": [
            [(U, "春节想自驾回老家"), (A, "路程多远？"), (U, "八百多公里，路上要注意什么")],
        ],
        "dialogues_en": [
            [
                (U, "Thinking of a road trip along the coast"),
                (A, "Sounds fun! How long?"),
                (U, "About 900 km. What should I plan for on the way?"),
            ]
        ],
    },
    {
        "id": "home",
        "mem": ["用户住在{x}", "我家在{x}附近"],
        "en": "I live in {x_en}.",
        "values": [
            {"x": "杭州西湖区", "x_en": "Xihu District, Hangzhou"},
            {"x": "成都高新区", "x_en": "the Chengdu high-tech zone"},
            {"x": "北京朝阳区望京", "x_en": "Wangjing, Chaoyang, Beijing"},
        ],
        "dialogues": [
            [(U, "这周末没什么事"), (A, "想出去走走吗？"), (U, "嗯，附近有啥好去处，别太远")],
        ],
    },
    {
        "id": "wife",
        "mem": ["用户的妻子{x}是{job}，经常{shift}", "我老婆叫{x}，{job}，{shift}"],
        "en": "My wife {x_en} is a {job_en} and often {shift_en}.",
        "values": [
            {
                "x": "小林",
                "x_en": "Xiaolin",
                "job": "急诊科护士",
                "job_en": "ER nurse",
                "shift": "上夜班",
                "shift_en": "works night shifts",
            },
            {
                "x": "王琳",
                "x_en": "Wang Lin",
                "job": "空乘",
                "job_en": "flight attendant",
                "shift": "出差飞国际航线",
                "shift_en": "flies long-haul",
            },
            {
                "x": "晓燕",
                "x_en": "Xiaoyan",
                "job": "律师",
                "job_en": "lawyer",
                "shift": "加班到很晚",
                "shift_en": "works late",
            },
        ],
        "dialogues": [
            [
                (U, "下周想给家里那位一个惊喜"),
                (A, "好主意，有什么想法吗？"),
                (U, "想订个晚餐，你看安排在哪天什么时间比较好"),
            ],
        ],
    },
    {
        "id": "anniversary",
        "mem": ["用户的结婚纪念日是{x}", "我和爱人{x}结婚的"],
        "en": "Our wedding anniversary is on {x_en}.",
        "values": [
            {"x": "5月20日", "x_en": "20 May"},
            {"x": "10月1日", "x_en": "1 October"},
            {"x": "2月14日", "x_en": "14 February"},
        ],
        "dialogues": [
            [
                (U, "帮我看看下个月的日程"),
                (A, "好的，目前有三个会议。"),
                (U, "除了工作，还有什么重要日子我别忘了"),
            ],
        ],
    },
    {
        "id": "coffee",
        "mem": ["用户喝咖啡只喝{x}", "我只喝{x}"],
        "en": "I only drink {x_en}.",
        "values": [
            {"x": "燕麦拿铁，不加糖", "x_en": "oat latte, no sugar"},
            {"x": "冰美式", "x_en": "iced Americano"},
            {"x": "热的馥芮白", "x_en": "hot flat white"},
        ],
        "dialogues": [
            [(U, "早上好困"), (A, "要来杯咖啡吗？"), (U, "好，帮我在楼下那家下个单")],
        ],
        "dialogues_en": [
            [
                (U, "Morning, so sleepy"),
                (A, "Coffee?"),
                (U, "Yes please, order me the usual from the café downstairs"),
            ]
        ],
    },
    {
        "id": "music",
        "mem": ["用户喜欢听{x}", "我平时最爱听{x}"],
        "en": "I like listening to {x_en}.",
        "values": [
            {"x": "周杰伦的歌", "x_en": "Jay Chou"},
            {"x": "古典音乐，尤其是肖邦", "x_en": "classical music, especially Chopin"},
            {"x": "民谣，比如赵雷", "x_en": "folk songs like Zhao Lei's"},
        ],
        "dialogues": [
            [(U, "准备开车出发了"), (A, "一路顺风！"), (U, "路上有点无聊，放点歌吧")],
        ],
    },
    {
        "id": "saving",
        "mem": ["用户在攒钱买房，首付目标{x}", "我正在存首付，目标{x}"],
        "en": "I'm saving for a down payment on a flat, target {x_en}.",
        "values": [
            {"x": "一百万", "x_en": "1 million yuan"},
            {"x": "八十万", "x_en": "800k yuan"},
            {"x": "一百五十万", "x_en": "1.5 million yuan"},
        ],
        "dialogues": [
            [(U, "新出的手机好心动"), (A, "是最新款吗？"), (U, "对，八千多，你说我该不该买")],
        ],
    },
    {
        "id": "hobby",
        "mem": ["用户周末喜欢{x}", "我的爱好是{x}"],
        "en": "On weekends I like {x_en}.",
        "values": [
            {"x": "去水库钓鱼", "x_en": "fishing at the reservoir"},
            {"x": "在家烘焙", "x_en": "baking at home"},
            {"x": "爬山徒步", "x_en": "hiking"},
        ],
        "dialogues": [
            [
                (U, "终于忙完这个项目了"),
                (A, "恭喜！可以好好放松一下了。"),
                (U, "是啊，帮我规划下这个周末怎么过"),
            ],
        ],
    },
    {
        "id": "medicine",
        "mem": ["用户正在服用{x}，不能喝酒", "我最近在吃{x}，医生说禁酒"],
        "en": "I'm taking {x_en}, so no alcohol.",
        "values": [
            {"x": "头孢类抗生素", "x_en": "a cephalosporin antibiotic"},
            {"x": "甲硝唑", "x_en": "metronidazole"},
            {"x": "降压药", "x_en": "blood pressure pills"},
        ],
        "dialogues": [
            [(U, "周五部门聚餐"), (A, "听起来不错。"), (U, "领导说要喝几杯，我该怎么应对")],
        ],
        "dialogues_en": [
            [
                (U, "There's a client dinner on Friday"),
                (A, "Need help preparing?"),
                (U, "They always order wine. How should I handle it?"),
            ]
        ],
    },
    {
        "id": "eyes",
        "mem": ["用户高度近视，{x}", "我近视一千度，{x}"],
        "en": "I'm very short-sighted and {x_en}.",
        "values": [{"x": "晚上开车看不清"}, {"x": "夜里不敢开车"}, {"x": "天黑后尽量不开车"}],
        "dialogues": [
            [(U, "明晚十一点的航班"), (A, "要提前规划去机场的路线吗？"), (U, "对，你看我怎么去机场比较好")],
        ],
    },
    {
        "id": "father",
        "mem": ["用户的父亲退休了，平时喜欢{x}", "我爸退休在家，爱{x}"],
        "en": "My dad is retired and loves {x_en}.",
        "values": [
            {"x": "下象棋", "x_en": "Chinese chess"},
            {"x": "书法", "x_en": "calligraphy"},
            {"x": "养花", "x_en": "gardening"},
        ],
        "dialogues": [
            [(U, "下周是老爷子生日"), (A, "要准备礼物吗？"), (U, "嗯，你帮我想想送什么他会喜欢")],
        ],
    },
    {
        "id": "team",
        "mem": ["用户带一个{n}人的团队，每周一上午十点开例会", "我管着{n}个人，周一上午固定开周会"],
        "en": "I lead a team of {n}; our weekly meeting is Monday at 10 am.",
        "values": [{"n": "8"}, {"n": "12"}, {"n": "5"}],
        "dialogues": [
            [(U, "客户想下周一上午来公司拜访"), (A, "需要我安排会议室吗？"), (U, "先看看我时间上有没有冲突")],
        ],
    },
    {
        "id": "quiet",
        "mem": ["用户不喜欢嘈杂的餐厅，更喜欢安静的包间", "我受不了太吵的饭馆"],
        "en": "I can't stand noisy restaurants; I prefer quiet private rooms.",
        "values": [{}],
        "dialogues": [
            [(U, "下周要请一个重要客户吃饭"), (A, "好的，需要推荐餐厅吗？"), (U, "对，帮我挑一家")],
        ],
    },
    {
        "id": "halal",
        "mem": ["用户是回族，不吃猪肉", "我不吃猪肉，家里是穆斯林"],
        "en": "I don't eat pork; my family is Muslim.",
        "values": [{}],
        "dialogues": [
            [(U, "今年年夜饭轮到我家做"), (A, "那可得好好准备。"), (U, "帮我列个菜单，八个菜左右")],
        ],
    },
    {
        "id": "pregnant",
        "mem": ["用户的妻子怀孕{x}个月了", "我老婆怀孕{x}个月"],
        "en": "My wife is {x} months pregnant.",
        "values": [{"x": "五"}, {"x": "六"}, {"x": "四"}],
        "dialogues": [
            [
                (U, "最近工作压力有点大"),
                (A, "要不要安排个短途旅行放松一下？"),
                (U, "好啊，推荐几个周末能去的地方，要带上家里人"),
            ],
        ],
    },
    {
        "id": "back",
        "mem": ["用户有{x}，不能久坐", "我{x}，坐久了腰疼"],
        "en": "I have {x_en}, so I can't sit for long.",
        "values": [
            {"x": "腰椎间盘突出", "x_en": "a herniated disc"},
            {"x": "腰肌劳损", "x_en": "chronic lower back strain"},
            {"x": "颈椎病", "x_en": "cervical spondylosis"},
        ],
        "dialogues": [
            [(U, "下个月要去上海出差"), (A, "坐高铁还是飞机？"), (U, "高铁要五个多小时，飞机又贵，你说呢")],
            [(U, "公司说可以报销一把办公椅"), (A, "不错的福利。"), (U, "帮我挑一把")],
        ],
    },
    {
        "id": "piano",
        "mem": ["用户的儿子每周六上午{x}", "我儿子周六上午要{x}"],
        "en": "My son has {x_en} every Saturday morning.",
        "values": [
            {"x": "上钢琴课", "x_en": "a piano lesson"},
            {"x": "去学游泳", "x_en": "swimming class"},
            {"x": "上编程班", "x_en": "a coding class"},
        ],
        "dialogues": [
            [(U, "老同学约我周六上午喝茶"), (A, "好呀，要我记到日程里吗？"), (U, "等等，我那天上午有空吗")],
        ],
    },
    {
        "id": "birthday",
        "mem": ["用户的生日是{x}", "我生日在{x}"],
        "en": "My birthday is on {x_en}.",
        "values": [
            {"x": "3月8日", "x_en": "8 March"},
            {"x": "11月23日", "x_en": "23 November"},
            {"x": "7月15日", "x_en": "15 July"},
        ],
        "dialogues": [
            [(U, "朋友问我想要什么生日礼物"), (A, "可以列个心愿单。"), (U, "离我过生日还有多久来着")],
        ],
    },
    {
        "id": "phone",
        "mem": ["用户用的手机是{x}", "我的手机是{x}"],
        "en": "My phone is a {x_en}.",
        "values": [
            {"x": "iPhone 15", "x_en": "iPhone 15"},
            {"x": "华为Mate 60", "x_en": "Huawei Mate 60"},
            {"x": "小米14", "x_en": "Xiaomi 14"},
        ],
        "dialogues": [
            [(U, "充电器又坏了"), (A, "需要买个新的吗？"), (U, "对，帮我选个快充的，别买错接口")],
        ],
        "dialogues_en": [
            [
                (U, "My earbuds died"),
                (A, "Want recommendations?"),
                (U, "Yes, something that pairs well with my phone"),
            ]
        ],
    },
    {
        "id": "reading",
        "mem": ["用户正在读{x}", "我最近在看{x}"],
        "en": "I'm currently reading {x_en}.",
        "values": [
            {"x": "《三体》", "x_en": "The Three-Body Problem"},
            {"x": "《百年孤独》", "x_en": "One Hundred Years of Solitude"},
            {"x": "《人类简史》", "x_en": "Sapiens"},
        ],
        "dialogues": [
            [(U, "最近书荒了"), (A, "想看哪类书？"), (U, "你根据我的口味推荐几本吧")],
        ],
    },
    {
        "id": "diet",
        "mem": ["用户在减肥，晚饭不吃主食", "我在减脂，晚上只吃蛋白质和蔬菜"],
        "en": "I'm on a diet: no rice or noodles at dinner.",
        "values": [{}],
        "dialogues": [
            [(U, "下班了，好饿"), (A, "要点外卖吗？"), (U, "嗯，晚饭吃啥好")],
        ],
        "dialogues_en": [
            [
                (U, "Just got home, starving"),
                (A, "Shall I find something to order?"),
                (U, "Yes, what should I have for dinner?"),
            ]
        ],
    },
    {
        "id": "heights",
        "mem": ["用户恐高", "我有恐高症，不敢去高的地方"],
        "en": "I'm afraid of heights.",
        "values": [{}],
        "dialogues": [
            [(U, "端午想去张家界"), (A, "那边风景很美。"), (U, "帮我排个两天的行程，景点挑一挑")],
        ],
    },
    {
        "id": "carsick",
        "mem": ["用户容易晕车，坐车要坐前排", "我晕车很厉害"],
        "en": "I get carsick easily and need the front seat.",
        "values": [{}],
        "dialogues": [
            [(U, "朋友约我们自驾去川西"), (A, "川西的盘山路很多哦。"), (U, "我需要提前准备点什么吗")],
        ],
    },
    {
        "id": "grandma",
        "mem": ["用户的奶奶住在老家{x}，用户每月回去看她一次", "我奶奶一个人住在{x}，我每个月回去一趟"],
        "en": "My grandmother lives alone in {x_en}; I visit her once a month.",
        "values": [
            {"x": "湖南衡阳", "x_en": "Hengyang, Hunan"},
            {"x": "河南洛阳", "x_en": "Luoyang, Henan"},
            {"x": "山东烟台", "x_en": "Yantai, Shandong"},
        ],
        "dialogues": [
            [(U, "下个月的假期还没用"), (A, "打算怎么安排？"), (U, "你帮我看看有什么该安排上的")],
        ],
    },
    {
        "id": "wfh",
        "mem": ["用户每周{x}在家办公", "我{x}居家办公"],
        "en": "I work from home every {x_en}.",
        "values": [
            {"x": "四", "x_en": "Thursday"},
            {"x": "五", "x_en": "Friday"},
            {"x": "三", "x_en": "Wednesday"},
        ],
        "dialogues": [
            [(U, "家里的热水器坏了"), (A, "要约师傅上门吗？"), (U, "要，你看约哪天我在家")],
        ],
    },
    {
        "id": "tea",
        "mem": ["用户喜欢喝{x}", "我爱喝{x}"],
        "en": "I love {x_en} tea.",
        "values": [
            {"x": "普洱熟茶", "x_en": "ripe pu-erh"},
            {"x": "西湖龙井", "x_en": "Longjing green"},
            {"x": "武夷岩茶", "x_en": "Wuyi rock"},
        ],
        "dialogues": [
            [(U, "办公室的茶叶喝完了"), (A, "需要补货吗？"), (U, "嗯，帮我挑一款")],
        ],
    },
    {
        "id": "invest",
        "mem": ["用户理财很保守，只买银行定期和国债", "我不炒股，钱都放定期"],
        "en": "I'm a conservative investor: only fixed deposits and government bonds.",
        "values": [{}],
        "dialogues": [
            [(U, "同事最近炒币赚了不少"), (A, "加密货币波动很大。"), (U, "你说我要不要也拿点钱试试")],
        ],
    },
    {
        "id": "volunteer",
        "mem": ["用户每月第一个周日去{x}做志愿者", "我每个月第一个星期天去{x}帮忙"],
        "en": "On the first Sunday of every month I volunteer at {x_en}.",
        "values": [
            {"x": "敬老院", "x_en": "a nursing home"},
            {"x": "流浪动物救助站", "x_en": "a stray animal shelter"},
            {"x": "社区图书馆", "x_en": "the community library"},
        ],
        "dialogues": [
            [(U, "朋友约下个月第一个周日去露营"), (A, "听起来很有意思。"), (U, "我那天能去吗")],
        ],
    },
]

# Facts of the user that no dialogue here asks for: they compete for the top ranks.
FILLERS = [
    "我的鞋码是42",
    "用户喜欢蓝色",
    "我大学学的是{major}",
    "用户老家在{city}",
    "我最近在追《繁花》",
    "用户的车牌尾号是7",
    "我不太会游泳",
    "用户在2019年买了第一套房",
    "我习惯用Mac办公",
    "用户的血型是O型",
    "我小时候学过三年小提琴",
    "用户喜欢吃甜豆花",
    "我是个夜猫子，常常凌晨一点才睡",
    "用户养过一缸热带鱼",
    "我最喜欢的季节是秋天",
    "用户的英文名是{en_name}",
    "我喜欢玩王者荣耀",
    "用户对猫毛不过敏",
    "我会开手动挡",
    "用户去年换了近视眼镜",
    "我最怕打针",
    "用户在公司负责年会的节目",
    "我喜欢的球队是广州队",
    "用户不喜欢香菜",
    "我每年体检一次",
    "用户有一个哥哥在深圳工作",
    "我收藏了很多黑胶唱片",
    "用户每天早上七点起床",
    "我的微信头像是一只柴犬",
    "用户报名了公司的羽毛球比赛",
    "我不喜欢坐飞机靠窗",
    "用户喜欢宫崎骏的电影",
    "我家附近新开了一家健身房",
    "用户最近在学做咖喱",
    "我上个月换了新工位",
    "用户喜欢在周日晚上整理一周的计划",
    "我大学时参加过辩论队",
    "用户收养过一只流浪猫",
    "我去过十二个国家",
    "用户的工号是A1027",
    "I prefer aisle seats on long flights",
    "I keep a paper diary",
    "My favourite film is Spirited Away",
    "I studied abroad in Manchester for a year",
    "I'm a night owl and do my best work after 10 pm",
    "I support Arsenal",
    "I'm left-handed",
    "我喜欢收集冰箱贴",
    "用户每周给父母打一次电话",
    "我的雨伞总是忘在公司",
    "用户喜欢逛宜家",
    "我在学做手冲咖啡",
    "用户最近迷上了骑行",
    "我对数字很敏感，记账从不出错",
]
FILLER_VALUES = [
    {"major": "计算机", "city": "江西赣州", "en_name": "Kevin"},
    {"major": "会计", "city": "广西桂林", "en_name": "Lily"},
    {"major": "机械工程", "city": "黑龙江哈尔滨", "en_name": "Jason"},
]
# Dialogues that need no memory: small talk and general questions.
CHITCHAT = [
    [(U, "今天天气真好"), (A, "是呀，阳光明媚。"), (U, "哈哈，心情都变好了")],
    [(U, "你知道光速是多少吗"), (A, "大约每秒30万公里。"), (U, "那声音呢")],
    [(U, "讲个笑话吧"), (A, "好的，你想听冷笑话还是段子？"), (U, "冷笑话")],
    [(U, "帮我把这句话翻译成英文：知识就是力量"), (A, "Knowledge is power."), (U, "再翻成法语")],
    [(U, "一年有多少个星期"), (A, "52个星期多一点。"), (U, "那闰年呢")],
    [(U, "Python里怎么反转一个列表"), (A, "可以用 list.reverse() 或切片 [::-1]。"), (U, "哪个更快")],
    [(U, "What's the capital of Australia?"), (A, "Canberra."), (U, "Why not Sydney?")],
    [(U, "地球到月球有多远"), (A, "平均约38万公里。"), (U, "坐飞机要飞多久")],
    [(U, "帮我算一下 37 乘以 48"), (A, "等于1776。"), (U, "再除以 12 呢")],
    [(U, "写一首关于春天的短诗"), (A, "好的，五言还是七言？"), (U, "五言吧")],
    [(U, "Tell me a fun fact about octopuses"), (A, "They have three hearts."), (U, "Wow, another one?")],
    [(U, "你觉得人工智能会取代人类吗"), (A, "它更可能是工具而不是替代。"), (U, "为什么这么说")],
]


def build(seed: int = 0, users: int = 6, queries_per_user: int = 22, total: int = 85) -> dict:
    """{"users": [{"name", "memories": [{"id", "content"}]}], "queries": [...]}."""
    rng = random.Random(seed)
    out_users, queries = [], []
    for u in range(users):
        name = f"zh_user{u}"
        english_kinds = {k["id"] for k in KINDS if "en" in k and rng.random() < 0.25}
        memories, by_kind = [], {}
        for k in KINDS:
            values = k["values"][(u + rng.randint(0, 2)) % len(k["values"])]
            if k["id"] in english_kinds:
                text = k["en"].format(**values)
            else:
                text = rng.choice(k["mem"]).format(**values)
            mid = f"{name}:{k['id']}"
            memories.append({"id": mid, "content": text, "lang": "en" if k["id"] in english_kinds else "zh"})
            by_kind[k["id"]] = mid
        fill_values = FILLER_VALUES[u % len(FILLER_VALUES)]
        for i, text in enumerate(rng.sample(FILLERS, k=min(len(FILLERS), total - len(KINDS)))):
            memories.append({"id": f"{name}:f{i}", "content": text.format(**fill_values), "lang": "zh"})
        rng.shuffle(memories)
        out_users.append({"name": name, "memories": memories})
        for k in rng.sample(KINDS, k=min(queries_per_user, len(KINDS))):
            english = "dialogues_en" in k and rng.random() < 0.35
            dialogue = rng.choice(k["dialogues_en"] if english else k["dialogues"])
            cross = english != (k["id"] in english_kinds)
            queries.append(
                {"id": f"{name}-q{len(queries)}", "user": name, "kind": k["id"], "target": by_kind[k["id"]],
                 "category": "cross-lingual" if cross else "same-language", "dialogue": render(dialogue)}
            )  # fmt: skip
        for dialogue in rng.sample(CHITCHAT, k=2):
            queries.append(
                {"id": f"{name}-q{len(queries)}", "user": name, "kind": "none", "target": None,
                 "category": "no-memory", "dialogue": render(dialogue)}
            )  # fmt: skip
    return {"users": out_users, "queries": queries}


def render(turns) -> str:
    return "\n".join(f"{role}：{text}" for role, text in turns)


if __name__ == "__main__":
    from collections import Counter

    data = build()
    print(
        len(data["users"]),
        "users,",
        sum(len(u["memories"]) for u in data["users"]),
        "memories,",
        len(data["queries"]),
        "queries",
    )
    print(Counter(q["category"] for q in data["queries"]))
    print(data["users"][0]["memories"][:8])
    for q in data["queries"][:4]:
        print(q)
